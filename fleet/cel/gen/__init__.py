"""cel-go's CEL grammar (CEL.g4, cel-go v0.29.2) compiled by ANTLR 4.13.1 for Python: see generate.sh. Generated code,
not edited; fleet/cel/parse_errors.py drives it."""
