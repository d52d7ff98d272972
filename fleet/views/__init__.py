"""The table views of the fleet, one pure module each (columns, row function, which rows a delta touches, where
enter goes): pools, nodes, devices, attributes, claims, pending (stuck pods), findings. No Textual here; the
navigation registry (tui/views.py) maps names, digits and aliases to these classes and to the tool screens."""
