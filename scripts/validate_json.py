#!/usr/bin/env python3
"""Validates JSON documents against a JSON Schema with the independent `jsonschema` package.

Usage: validate_json.py SCHEMA FILE [--lines]
With --lines, FILE is NDJSON and every line is validated. Prints one line per invalid document and
exits 1 if any is invalid; prints "N valid" and exits 0 otherwise.
"""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, data_path = sys.argv[1], sys.argv[2]
    lines = "--lines" in sys.argv[3:]
    with open(schema_path, encoding="utf-8") as handle:
        schema = json.load(handle)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    with open(data_path, encoding="utf-8") as handle:
        documents = [json.loads(line) for line in handle if line.strip()] if lines else [json.load(handle)]
    invalid = 0
    for number, document in enumerate(documents, start=1):
        for error in validator.iter_errors(document):
            invalid += 1
            print(f"document {number}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
    if invalid:
        return 1
    print(f"{len(documents)} valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
