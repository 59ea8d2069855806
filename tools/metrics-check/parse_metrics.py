#!/usr/bin/env python3
"""Reads a Prometheus text exposition (a /metrics answer) with Prometheus's own Python parser
(prometheus_client.parser, Debian's python3-prometheus-client) and prints it as JSON for
tests/integration/tst_telemetry_live: {"families": {name: type}, "samples": [[name, labels, value]]}.
A text the parser refuses exits 1 with its error."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    families, samples = {}, []
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = family.type
            for s in family.samples:
                samples.append([s.name, s.labels, s.value])
    except Exception as e:  # the parser's own error is what the test shows
        print(json.dumps({"error": str(e)}))
        return 1
    print(json.dumps({"families": families, "samples": samples}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
