"""FRR in the switch, as SONiC's bgp container runs it: the daemons started and loaded, vtysh, which daemon
gets which line, drift between FRR and what was rendered, and the writers a killed agent left behind."""
