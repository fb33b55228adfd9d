"""The switch's redis databases, as SONiC's database container holds them: the per-switch redis-server, the
SONiC database client over it and the budget of connections its clients share."""
