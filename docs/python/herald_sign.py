import hashlib, hmac, json, os, secrets, time, urllib.error, urllib.parse, urllib.request

class HeraldError(Exception):
    """Herald refused: branch on .code (the body's "error"), show .message, quote .request_id to the operators."""
    def __init__(self, status, body, request_id=None):
        self.status, self.body = status, body if isinstance(body, dict) else dict()
        self.code = self.body.get("error", f"http_{status}")
        self.message = self.body.get("message", f"HTTP {status}")
        self.request_id = self.body.get("request_id", request_id)
        super().__init__(f"{status} {self.code}: {self.message} (request_id {self.request_id})")

def sign(secret, method, target, timestamp, nonce="", body=b""):
    canonical = "\n".join([method.upper(), target, str(timestamp), nonce, hashlib.sha256(body).hexdigest()])
    return hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest()

def herald(method, url, body=None, key_id=None, secret=None):
    key_id, secret = key_id or os.environ["HERALD_KEY_ID"], secret or os.environ["HERALD_SECRET"]
    raw = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
    url_parts = urllib.parse.urlsplit(url)
    target = url_parts.path + ("?" + url_parts.query if url_parts.query else "")
    ts, nonce = int(time.time()), secrets.token_hex(16) if method in ("POST", "PUT", "PATCH", "DELETE") else ""
    headers = {"X-Partner-Key": key_id, "X-Partner-Timestamp": str(ts), "X-Partner-Signature": sign(secret, method, target, ts, nonce, raw)}
    if nonce: headers.update({"X-Partner-Nonce": nonce, "Idempotency-Key": secrets.token_hex(16)})
    if raw: headers["Content-Type"] = "application/json"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=raw or None, method=method, headers=headers)) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        # Every refusal is {"success": false, "error", "message", "request_id"} (a replay also has original_response).
        try: refusal = json.loads(e.read() or b"null")
        except ValueError: refusal = None
        raise HeraldError(e.code, refusal, e.headers.get("X-Request-ID")) from None
