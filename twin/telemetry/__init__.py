"""`twin telemetry`: a lab watched as a SONiC fabric is watched. A collector subscribes to every switch
over gNMI as gnmic would (SAMPLE on COUNTERS_DB, ON_CHANGE on STATE_DB and APPL_DB) and serves what it
reads as Prometheus metrics; a real Prometheus (Debian's) scrapes it; Grafana dashboards read that."""
