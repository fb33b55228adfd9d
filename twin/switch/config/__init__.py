"""The switch's config daemons (SONiC's bgpcfgd/frrcfgd and the kernel side of swss): CONFIG_DB changes
validated, programmed into FRR and the kernel, and what was programmed remembered."""
