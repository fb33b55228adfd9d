#!/bin/sh
# Regenerate gNOI's Python modules (gnoi.system, gnoi.file and the gnoi.types/gnoi.common they import) from
# openconfig/gnoi's .proto files at v0.3.0, the version sonic-gnmi's go.mod pins.
#   usage: sh twin/switch/gnoi/gnoi_pb/regen.sh /path/to/openconfig/gnoi
# $PYTHON: a Python with grpcio-tools==1.60.2 (protoc 25: the modules then need only protobuf>=4.25
# and grpcio>=1.60 and carry no newer runtime version check); $PLUGINS: the bin directory of a
# Python with mypy-protobuf==5.1.0 (typed .pyi stubs; it needs a newer protobuf than 1.60.2's).
set -eu
GNOI=$1
PYTHON=${PYTHON:-python3}
OUT=$(cd "$(dirname "$0")" && pwd)
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
git -C "$GNOI" archive v0.3.0 system/system.proto file/file.proto types/types.proto common/common.proto | tar -x -C "$SRC"
BIN=${PLUGINS:-$(dirname "$(command -v "$PYTHON")")}
(cd "$SRC" && "$PYTHON" -m grpc_tools.protoc -I . \
    --plugin=protoc-gen-mypy="$BIN/protoc-gen-mypy" --plugin=protoc-gen-mypy_grpc="$BIN/protoc-gen-mypy_grpc" \
    --python_out="$OUT" --mypy_out="$OUT" --grpc_python_out="$OUT" --mypy_grpc_out="$OUT" \
    system/system.proto file/file.proto types/types.proto common/common.proto)
rm -f "$OUT"/types/types_pb2_grpc.py* "$OUT"/common/common_pb2_grpc.py*   # no services there
for f in "$OUT"/system/*.py* "$OUT"/file/*.py* "$OUT"/types/*.py* "$OUT"/common/*.py*; do
    # protoc names imports after the .proto paths (`from types import types_pb2`, which would be
    # the standard library's `types`): make them absolute inside this package.
    sed -i -E 's/^from (system|file|types|common) import /from twin.switch.gnoi.gnoi_pb.\1 import /' "$f"
    sed -i 's/  # noqa: Y015$//' "$f"   # flake8-pyi codes, unknown to ruff (RUF102)
    printf '# ruff: noqa\n# mypy: ignore-errors\n' | cat - "$f" > "$f.tmp" && mv "$f.tmp" "$f"
done
for d in system file types common; do : > "$OUT/$d/__init__.py"; done
