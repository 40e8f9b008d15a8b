# Validates CDI spec files against the CDI project's own JSON schema (schema.json and defs.json in the
# folder given first), with python3-jsonschema; prints one line per error and exits 1 when any.
import json
import pathlib
import sys
import warnings

warnings.simplefilter("ignore")  # RefResolver is deprecated in newer releases; Debian 12's has nothing else
import jsonschema

folder = pathlib.Path(sys.argv[1]).resolve()
schema = json.loads((folder / "schema.json").read_text())
defs = json.loads((folder / "defs.json").read_text())
resolver = jsonschema.RefResolver(base_uri=folder.as_uri() + "/", referrer=schema,
                                  store={(folder / "defs.json").as_uri(): defs})
validator = jsonschema.Draft7Validator(schema, resolver=resolver)
bad = 0
for name in sys.argv[2:]:
    for e in sorted(validator.iter_errors(json.loads(pathlib.Path(name).read_text())), key=str):
        print(name + ": /" + "/".join(map(str, e.absolute_path)) + ": " + e.message)
        bad += 1
sys.exit(1 if bad else 0)
