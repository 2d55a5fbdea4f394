"""A scripted OpenAI-compatible endpoint for demos and screenshots (no model involved).

Structured requests (response_format: block verdicts) get the verdicts in VERDICTS; every other
request gets the program in PROGRAM. Prints its base URL on the first line of stdout.
Usage: python3 scripts/fake_openai.py VERDICTS.json PROGRAM.py
"""
import http.server
import json
import sys

VERDICTS = open(sys.argv[1]).read()
PROGRAM = open(sys.argv[2]).read()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if "response_format" in body:
            content = VERDICTS
        else:
            content = "Fixed program:\n```python\n" + PROGRAM + "```\n"
        reply = json.dumps({
            "id": "chatcmpl-demo", "object": "chat.completion", "created": 0,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(f"http://127.0.0.1:{server.server_port}/v1", flush=True)
server.serve_forever()
