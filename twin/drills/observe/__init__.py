"""What a drill records while it runs, all on one wall clock: every switch's FIB (netlink), BGP session
changes (bgpd's log), the leaves' uplink counters and the probe traffic's packets.

Each observer only records; the judgement is made afterwards from the records (measure, judge)."""
