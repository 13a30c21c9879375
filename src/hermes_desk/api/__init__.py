"""The HTTP and WebSocket service: FastAPI app, routes, edge guards and the console."""
