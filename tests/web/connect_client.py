"""A Connect client for tests, over HTTP/1.1 with the standard library, as a browser calls.

`unary` posts one message and returns the answer, or raises `CallError` with the Connect
error (code, message, the ErrorInfo reason read from its details); `stream` yields the
messages of a server stream and then raises `CallError` if its end says it failed.
"""

from __future__ import annotations

import base64
import http.client
import json
import struct
from collections.abc import Generator
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2

M = TypeVar("M", bound=Message)
MATCHMAKER = "/wargame.v1.Matchmaker/"
ENGINE = "/wargame.v1.RulesEngine/"


class CallError(Exception):
    """A Connect error."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.status = status
        self.code = str(error.get("code", ""))
        self.message = str(error.get("message", ""))
        self.details = list(error.get("details", []))

    @property
    def reason(self) -> str:
        """The ErrorInfo reason, decoded from the detail's bytes (not its debug copy)."""
        for detail in self.details:
            if detail["type"] == "google.rpc.ErrorInfo":
                value = detail["value"] + "=" * (-len(detail["value"]) % 4)
                return error_details_pb2.ErrorInfo.FromString(base64.b64decode(value)).reason
        return ""


class ConnectClient:
    """Calls to a web service at `host:port`, as a player with `token` (or nobody)."""

    def __init__(
        self, address: str, token: str = "", *, binary: bool = False, keep_alive: bool = False
    ) -> None:
        self.host, _, port = address.rpartition(":")
        self.port = int(port)
        self.token = token
        self.binary = binary
        self.keep_alive = keep_alive  # unary calls share one connection, as a browser's do
        self._kept: http.client.HTTPConnection | None = None

    def close(self) -> None:
        """Close the kept-alive connection, if any."""
        if self._kept is not None:
            self._kept.close()
            self._kept = None

    def _headers(self, kind: str) -> dict[str, str]:
        headers = {"Content-Type": kind, "Connect-Protocol-Version": "1"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _body(self, message: Message) -> bytes:
        if self.binary:
            return message.SerializeToString()
        return json_format.MessageToJson(message).encode()

    def _parse(self, data: bytes, answer: M) -> M:
        if self.binary:
            answer.ParseFromString(data)
        else:
            json_format.Parse(data.decode(), answer, ignore_unknown_fields=True)
        return answer

    def unary(self, procedure: str, request: Message, answer: M, timeout: float = 60) -> M:
        """Call a unary procedure ("/wargame.v1.Matchmaker/GetGame")."""
        kind = "application/proto" if self.binary else "application/json"
        if self.keep_alive and self._kept is not None:
            connection = self._kept
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            connection.request("POST", procedure, self._body(request), self._headers(kind))
            response = connection.getresponse()
            data = response.read()
        except BaseException:
            connection.close()
            self._kept = None
            raise
        if self.keep_alive and not response.will_close:
            self._kept = connection
        else:
            connection.close()
            self._kept = None
        if response.status != 200:
            raise CallError(response.status, json.loads(data))
        assert response.getheader("content-type") == kind
        return self._parse(data, answer)

    def stream(
        self, procedure: str, request: Message, answer: type[M], timeout: float = 60
    ) -> Generator[M, None, None]:
        """Open a server stream; its messages as they come."""
        kind = "application/connect+proto" if self.binary else "application/connect+json"
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        body = self._body(request)
        try:
            connection.request(
                "POST", procedure, struct.pack(">BI", 0, len(body)) + body, self._headers(kind)
            )
            response = connection.getresponse()
            assert response.status == 200, response.read()
            while True:
                head = response.read(5)
                if len(head) < 5:
                    raise AssertionError("the stream ended without its end-of-stream message")
                flags, length = struct.unpack(">BI", head)
                data = response.read(length)
                if flags & 0x02:
                    end = json.loads(data)
                    if "error" in end:
                        raise CallError(200, end["error"])
                    return
                yield self._parse(data, answer())
        finally:
            connection.close()
