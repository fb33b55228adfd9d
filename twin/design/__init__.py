"""Design tools: size a fabric from a GPU count (`twin size`), draw it (`twin graph`), and read and write
NVIDIA Air topologies. Pure where possible: the arithmetic, the layout and the file formats do no I/O."""
