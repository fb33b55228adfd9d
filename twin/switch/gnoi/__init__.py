"""gNOI on a twin switch (sonic-gnmi's gnoi_system.go): the System service and its generated protobuf modules."""
