"""A switch's lifecycle operations: the cold reboot gNOI System.Reboot asks for, FRR restarted as
`systemctl restart bgp` restarts SONiC's bgp container, and the services gNOI KillProcess stops and
restarts."""
