#!/usr/bin/env bash
# Regenerates the Python lexer and parser in this folder from cel-go's own grammar, with the ANTLR tool cel-go
# generated its Go parser with. Only needed when Kubernetes moves to another cel-go; a fresh checkout needs no Java.
#
# Versions (keep these three in step):
#   cel-go      v0.29.2  (k8s.io/apiserver v0.37.2's go.mod; Kubernetes v1.37.2)
#   ANTLR tool  4.13.1   (the header of cel-go's parser/gen/cel_parser.go: "by ANTLR 4.13.1")
#   runtime     antlr4-python3-runtime==4.13.1 (pyproject.toml)
#
# Needs Java 17+, Maven (or the jar already in ~/.m2) and Go's module cache with cel-go (`go mod download
# github.com/google/cel-go@v0.29.2`). Run from anywhere: fleet/cel/gen/generate.sh
set -euo pipefail
CEL_GO=v0.29.2
ANTLR=4.13.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
grammar="$(go env GOMODCACHE)/github.com/google/cel-go@${CEL_GO}/parser/gen/CEL.g4"
jar="$HOME/.m2/repository/org/antlr/antlr4/${ANTLR}/antlr4-${ANTLR}-complete.jar"
[ -f "$jar" ] || mvn -q dependency:get -Dartifact="org.antlr:antlr4:${ANTLR}:jar:complete"
cp "$grammar" "$here/CEL.g4"
chmod u+w "$here/CEL.g4"
cd "$here"
java -Xmx500M -cp "$jar" org.antlr.v4.Tool -Dlanguage=Python3 -no-listener -no-visitor -o . CEL.g4
rm -f ./*.interp ./*.tokens  # ANTLR's tool-side files: the runtime does not read them
echo "generated from $grammar with ANTLR $ANTLR"

# The LALR tables of the Lark parser the CEL engine uses (fleet/cel/syntax.py): computed once here instead of in every
# process that parses CEL. Needs only the project's venv; tests/cel/test_cel_lalr.py fails when they are stale.
"${PYTHON:-python3}" -c "from dragoman.fleet.cel.syntax import write_tables; write_tables('cel_lalr.py')"
echo "wrote the CEL LALR tables (cel_lalr.py)"
