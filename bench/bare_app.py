"""Baseline: a bare FastAPI route returning a constant, served like the gateway."""

import sys

import uvicorn
from fastapi import FastAPI

app = FastAPI()
CONSTANT = {"model": "h100", "total_usd": "189.00"}


@app.post("/constant")
async def constant() -> dict:
    return CONSTANT


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
