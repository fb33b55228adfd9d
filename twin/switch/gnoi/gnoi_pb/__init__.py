"""gNOI's Python modules (generated; see README.md here): `gnoi.system` and what it imports."""
