"""The sonic-mgmt tier's re-expressed clients, on their own: py_gnmicli's xpath splitting, keys and
values, grpcurl's request documents and PtfGrpc's reading of its failures, and sonic-mgmt's gnmi_get
reading what py_gnmicli prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
import sonic_mgmt_clients as clients
import sonic_mgmt_helpers as helpers


@pytest.mark.parametrize(("xpath", "names"), [
    ("/CONFIG_DB/localhost/PORT/Ethernet0/admin_status",
     ["CONFIG_DB", "localhost", "PORT", "Ethernet0", "admin_status"]),
    ("/CONFIG_DB/localhost/", ["CONFIG_DB", "localhost"]),
    ("/", []),
    ("/a[name=x/y]/b", ["a[name=x/y]", "b"]),            # a '/' inside a key is not a separator
    ("/COUNTERS_DB/localhost/COUNTERS_QUEUE_NAME_MAP/Ethernet0:3", ["COUNTERS_DB", "localhost",
                                                                   "COUNTERS_QUEUE_NAME_MAP", "Ethernet0:3"]),
    (r"/a\/b/c", ["a/b", "c"]),                          # an escaped '/' stays in the name, its escape dropped
    ("/a[name=x/b", []),                                 # an unclosed '[' gives no path
])
def test_xpaths_split_as_py_gnmicli_splits_them(xpath: str, names: list[str]) -> None:
    assert clients.xpath_names(xpath) == names


def test_keys_become_path_element_keys() -> None:
    path = clients.xpath_path(["interfaces", "interface[name=Ethernet0][unit=0]", "state"])
    assert [e.name for e in path.elem] == ["interfaces", "interface", "state"]
    assert dict(path.elem[1].key) == {"name": "Ethernet0", "unit": "0"}


def test_values_take_py_gnmicli_types(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "port.txt").write_text('"down"')
    (tmp_path / "root" / "vnet.pb").write_bytes(b"\x08\xe8\x07")
    assert clients.typed_value("@/root/port.txt", tmp_path).json_ietf_val == b'"down"'
    assert clients.typed_value("$/root/vnet.pb", tmp_path).proto_bytes == b"\x08\xe8\x07"
    assert clients.typed_value("", tmp_path) is None
    assert clients.typed_value("-3", tmp_path).int_val == -3
    assert clients.typed_value("1.5", tmp_path).float_val == 1.5
    assert clients.typed_value("true", tmp_path).bool_val is True
    assert clients.typed_value("up", tmp_path).string_val == "up"


def test_grpcurl_reads_concatenated_request_documents() -> None:
    assert clients._json_documents('{"a": 1}\n{"b": 2} ') == ['{"a": 1}', '{"b": 2}']
    assert clients._json_documents("") == []


@pytest.mark.parametrize(("stderr", "kind"), [
    ("ERROR:\n  Code: NotFound\n  Message: path not found: /etc/x", clients.GrpcCallError),
    ("ERROR:\n  Code: Unimplemented\n  Message: x", clients.GrpcCallError),
    ("Failed to dial target host \"1.2.3.4:8080\": connection refused", clients.GrpcConnectionError),
    ("ERROR:\n  Code: DeadlineExceeded\n  Message: context deadline exceeded", clients.GrpcTimeoutError),
    ("ERROR:\n  Code: Unknown\n  Message: Dbus does not support gnmi service management", clients.PtfGrpcError),
])
def test_failures_are_read_as_ptf_grpc_reads_them(stderr: str, kind: type) -> None:
    error = clients.ptf_grpc_error(clients.Run(1, "", stderr))
    assert type(error) is kind and stderr.splitlines()[-1].split(": ", 1)[-1] in str(error)


def _dut_printing(stdout: str) -> SimpleNamespace:
    return SimpleNamespace(py_gnmicli=SimpleNamespace(get=lambda *a, **k: clients.Run(0, stdout)))


def test_gnmi_get_returns_each_printed_value() -> None:
    printed = ("Performing GetRequest ...\n" + clients.GET_MARK + "\n" + json.dumps("down", indent=2) + "\n"
               + clients.DASHES + "\n\n" + json.dumps({"a": "1"}, indent=2) + "\n" + clients.DASHES + "\n\n")
    assert helpers.gnmi_get(_dut_printing(printed), ["/sonic-db:CONFIG_DB/x"]) == ['"down"', '{\n  "a": "1"\n}']


def test_gnmi_get_raises_what_py_gnmicli_printed_as_a_grpc_error() -> None:
    with pytest.raises(RuntimeError, match="GRPC error: path not found"):
        helpers.gnmi_get(_dut_printing("Performing GetRequest ...\nGRPC error\n path not found\n"), ["/x"])
