"""gRPC server reflection on a switch's server, as sonic-gnmi registers it (gnmi_server/server.go:
`reflection.Register` on every server it makes).

grpc-go's reflection.Register serves both grpc.reflection.v1.ServerReflection and
grpc.reflection.v1alpha.ServerReflection, and lists every service of the server, the two reflection
services among them, in name order. grpcurl (as sonic-mgmt's tests/common/ptf_grpc.py runs it, with
no -proto flags) learns a switch's services and their messages this way: v1 first, v1alpha when
v1 is unimplemented.

PyPI's grpcio-reflection serves v1alpha only. v1 is the same service with the same messages in
another package (grpc/reflection/v1/reflection.proto), so the same servicer answers it: its
descriptor is v1alpha's with the package renamed, added to the descriptor pool so that v1's own
symbols resolve, and its messages are v1alpha's on the wire (same fields, same numbers).

The servicer answers from the default descriptor pool, where every generated module (gNMI's,
gNOI's) puts its files: a client asks for a service's file, then for the files it imports.
Reflection needs no credentials: sonic-gnmi authenticates inside each gNMI and gNOI method, and
the reflection service has none of that (twin.switch.access.grpc_guard lets it through unjudged).
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1ALPHA = reflection.SERVICE_NAME                               # grpc.reflection.v1alpha.ServerReflection
V1_PACKAGE = "grpc.reflection.v1"
V1 = f"{V1_PACKAGE}.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"
METHOD = "ServerReflectionInfo"
REFLECTION_METHODS = frozenset(f"/{service}/{METHOD}" for service in (V1, V1ALPHA))


def v1_file() -> descriptor_pb2.FileDescriptorProto:
    """grpc/reflection/v1/reflection.proto: v1alpha's file with its package renamed."""
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old = f".{proto.package}."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.options.Clear()  # v1alpha's go_package and java options name v1alpha's packages
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = f".{V1_PACKAGE}.{field.type_name[len(old):]}"
    for service in proto.service:
        for method in service.method:
            method.input_type = f".{V1_PACKAGE}.{method.input_type[len(old):]}"
            method.output_type = f".{V1_PACKAGE}.{method.output_type[len(old):]}"
    return proto


def _register_v1(pool: descriptor_pool.DescriptorPool) -> None:
    """Put v1's file in `pool` once (a later grpcio-reflection may have put its own there)."""
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.AddSerializedFile(v1_file().SerializeToString())


def served_services(services: Iterable[str]) -> list[str]:
    """What reflection lists for a server serving `services`: them and both reflection services, in
    name order (grpc-go's listServices)."""
    return sorted({*services, V1, V1ALPHA})


def enable_reflection(server: grpc.Server, services: Iterable[str]) -> list[str]:
    """Serve v1 and v1alpha reflection on `server`, which serves `services` (full names); returns
    what it lists."""
    pool = descriptor_pool.Default()
    _register_v1(pool)
    listed = served_services(services)
    servicer = reflection.ReflectionServicer(listed, pool=pool)
    for name in (V1ALPHA, V1):
        handler = grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
            response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, {METHOD: handler}),))
    return listed
