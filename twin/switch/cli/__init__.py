"""The switch's shell over SSH (sshd, sonic-utilities' show/config, klish, vtysh, sonic-db-cli and
redis-cli), with the guards on what it may send to FRR and redis."""
