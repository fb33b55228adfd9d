"""twin's gNMI server, written to answer as sonic-gnmi answers.

Read from sonic-net/sonic-gnmi at 5ec1c20b (gnmi_server/server.go, client_subscribe.go,
basicAuth.go; sonic_data_client/mixed_db_client.go, db_client.go, virtual_db.go,
json_client.go). One module per part of it:

- `status`: the gRPC status a request ends with (sonic-gnmi's codes and messages).
- `paths`: a request's paths resolved as sonic-gnmi resolves them, for the native (`sonic-db`
  origin, mixed_db_client.go) and the legacy (prefix target naming a database, db_client.go) handler.
- `native`: Get and Subscribe of the native handler, reading the switch's redis.
- `legacy`: Get and Subscribe of the legacy, read-only handler (prefix target naming a database);
  `legacy_db` its redis (go-redis's errors, tablePath, TableData2Msi), `legacy_stream` its STREAM
  workers, `virtual_db` virtual_db.go's COUNTERS_DB paths.
- `patch`: a Set as the JSON Patch sonic-gnmi forms (ConvertToJsonPatch) over its checkpoint.
- `gcu`: the patch applied as GCU applies it: to the running config, validated whole with YANG.
- `stream`: the Subscribe run loop shared by both handlers (client_subscribe.go).
- `server`: the gNMI servicer (Get, Set, Subscribe, Capabilities); its authentication is
  twin.switch.access.auth, shared with gNOI.
"""
