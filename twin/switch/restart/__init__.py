"""A switch's lifecycle operations: the cold reboot gNOI System.Reboot asks for, and FRR restarted as
`systemctl restart bgp` restarts SONiC's bgp container."""
