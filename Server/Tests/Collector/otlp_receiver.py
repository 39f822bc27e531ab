"""A test OpenTelemetry collector: receives OTLP/HTTP trace exports (POST /v1/traces, protobuf,
optionally gzip) and decodes them with the OpenTelemetry protobuf definitions
(opentelemetry-proto from PyPI), then appends each span as one JSON line to the file given.

    python3 otlp_receiver.py --port 0 --out spans.jsonl

Attribute values are written as text (booleans `true` and `false`).
Prints `listening on http://127.0.0.1:PORT` first; exits when its standard input closes (so a
test that dies leaves none behind). A request that does not decode is answered 400 and noted
in the file as {"error": ...}, so the test sees it.
"""

import argparse
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


def value(v):
    """An attribute's value as text: booleans `true` and `false`, numbers in decimal."""
    kind = v.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "bool_value":
        return "true" if v.bool_value else "false"
    return str(getattr(v, kind))


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(request):
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": KINDS.get(span.kind, str(span.kind)),
                    "attributes": attributes(span.attributes),
                    "status": span.status.code,
                    "resource": resource,
                }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    lock = threading.Lock()

    def write(line):
        with lock, open(args.out, "a") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                write({"error": f"POST {self.path}, not /v1/traces"})
                self.send_response(404)
                self.end_headers()
                return
            request = trace_service_pb2.ExportTraceServiceRequest()
            try:
                request.ParseFromString(body)
            except Exception as e:  # noqa: BLE001 - report what did not decode
                write({"error": f"not an ExportTraceServiceRequest: {e}"})
                self.send_response(400)
                self.end_headers()
                return
            for span in spans(request):
                write(span)
            answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
