# SPDX-License-Identifier: GPL-2.0-only
"""An OTLP/HTTP metrics receiver for the tests: POST /v1/metrics decoded with
Python classes that protoc compiles from the OpenTelemetry .proto files the
agent's build uses (third_party/opentelemetry-proto); each request kept with
its headers. It can be stopped (the port then refuses connections) and
started again on the same port, and serve https with a certificate of the test's."""
import http.server
import importlib
import os
import ssl
import subprocess
import sys
import tempfile
import threading

from itest import Skip, free_port

PROTO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "third_party", "opentelemetry-proto")
PROTOS = ["opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
          "opentelemetry/proto/metrics/v1/metrics.proto",
          "opentelemetry/proto/common/v1/common.proto",
          "opentelemetry/proto/resource/v1/resource.proto"]


def require_protobuf():
    """Debian's python3-protobuf (also under another Python 3.11) and protoc."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")
        try:
            import google.protobuf  # noqa: F401,F811
        except ImportError:
            raise Skip("python3-protobuf missing: scripts/deps installs it")
    if subprocess.run(["sh", "-c", "command -v protoc"], capture_output=True).returncode:
        raise Skip("protoc missing: scripts/deps installs protobuf-compiler")


_pb2 = None


def service_pb2():
    """ExportMetricsServiceRequest's module, compiled once per test process."""
    global _pb2
    if _pb2 is None:
        out = tempfile.mkdtemp(prefix="dlprof-otlp-pb.")
        subprocess.run(["protoc", f"-I{PROTO_ROOT}", f"--python_out={out}"] + [os.path.join(PROTO_ROOT, p) for p in PROTOS],
                       check=True)
        sys.path.insert(0, out)
        _pb2 = importlib.import_module("opentelemetry.proto.collector.metrics.v1.metrics_service_pb2")
    return _pb2


class Receiver:
    def __init__(self, port=None, tls=None):
        """tls: (certificate file, key file) to serve https."""
        self.port = port or free_port()
        self.tls = tls
        self.requests = []	# (headers dict, ExportMetricsServiceRequest)
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        pb2 = service_pb2()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                ok = self.path == "/v1/metrics" and self.headers.get("Content-Type") == "application/x-protobuf"
                if ok:
                    req = pb2.ExportMetricsServiceRequest()
                    req.ParseFromString(body)
                    with receiver.lock:
                        receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, req))
                    answer = pb2.ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()
                if ok:
                    self.wfile.write(answer)

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self.tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.server = None

    def last(self):
        with self.lock:
            return self.requests[-1] if self.requests else (None, None)

    def count(self):
        with self.lock:
            return len(self.requests)
