"""The web service: the same games in a browser, over the Connect protocol.

Browsers cannot speak gRPC (no HTTP/2 trailers in `fetch`), so `wargame-web` serves
`wargame.v1.Matchmaker` and the engine's read-only calls a board needs (`DescribeGame`,
`ListLegalActions`, `ParseAction`, `FormatAction`) over Connect (JSON or binary, unary and
server-streaming, over HTTP/1.1), and forwards each call to the matchmaker or the engine over
gRPC with the caller's token. It keeps no state: any replica serves any call, and a browser
whose stream breaks resumes `WatchGame` from the version it last saw. It also serves the page
(`static/`): the lobby at `/`, a game at `/g/<game id>`.

Where things are:

- `main.py`     `wargame-web`: flags (every one a WARGAME_WEB_* variable), logs, serving
- `connect.py`  the Connect wire protocol: envelopes, content types, errors with details
- `routes.py`   which procedures are served, and the gRPC method each one forwards to
- `server.py`   the HTTP server: forwarding, streams, limits, static files, health
- `static/`     the page: plain ES modules, no build step (`app.js` is the entry)
- `page/`       the page's pinned npm packages and `buf` template: `npm ci` at setup, then
               `vendor.mjs` bundles them into `static/vendor/bundle.js`; `make proto`
               writes `static/gen/`
"""
