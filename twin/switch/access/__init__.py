"""Who may use a switch's management plane, for gNMI, gNOI and SSH alike: password authentication,
failed logins slowed, gRPC calls gated, connections limited in nftables, the lab's TLS certificate."""
