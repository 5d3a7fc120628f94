import hashlib, hmac, json, os, secrets, time, urllib.parse, urllib.request

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
    with urllib.request.urlopen(urllib.request.Request(url, data=raw or None, method=method, headers=headers)) as res:
        return json.load(res)
