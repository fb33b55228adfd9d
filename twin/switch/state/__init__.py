"""The switch's state producers (what swss, fpmsyncd and bgpmon write): kernel and FRR events read and
written to the switch's state and application databases, and the switchd process that runs them."""
