"""Examples shipped with the package: controllers written in Python
(``longfat.examples.reno``), importable from an installed wheel."""
