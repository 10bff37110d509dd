"""Record the real hosts' request and response bodies again, as the fixtures the replay tests
serve from loopback (tests/test_hosts_replay.py).

    python tests/hosts/record.py jev                 # live: CHECKPROFILE_TEST_JEV_PYTHON
    python tests/hosts/record.py sglang              # wheel: CHECKPROFILE_TEST_SGLANG_WHEEL
    python tests/hosts/record.py transformers-serve  # live: the jev environment, with
                                                     # pip install "transformers[serving]==5.24.0"
    python tests/hosts/record.py litellm             # live: CHECKPROFILE_TEST_LITELLM_PYTHON
                                                     # and CHECKPROFILE_TEST_JEV_PYTHON
    python tests/hosts/record.py vllm                # wheel: CHECKPROFILE_TEST_VLLM_WHEEL

``jev`` starts jev-compatible-server with the tiny model (tests/jevhost.py), puts a recording
relay on loopback between it and the library's own adapter, runs each check of
:data:`JEV_CASES` through ``SystemOneEvaluator``, and writes each exchange, byte for byte as
JSON, to ``tests/hosts/jev-compatible-server-<version>/<case>.json``.

``sglang`` cannot run the server (it needs CUDA): it validates the library's OpenAI Decisions
request against sglang's own request model, imported from the wheel (tests/sglangproto.py),
and writes the refusal sglang's validation handler builds from those errors (its
``http_server.py``: status 400, ``ErrorResponse`` with the errors' text as ``message``).

``transformers-serve`` starts ``transformers serve`` on 127.0.0.1, pinned to the tiny model
(with a chat template), and records one question of the chat fallback (``ChatEvaluator``).

``litellm`` starts jev-compatible-server, a relay recording what it is sent and answers, and
LiteLLM's proxy in front of that relay (tests/litellmhost.py); it runs each check of
:data:`LITELLM_CASES` through the adapter of its route, with a recording relay between the
adapter and the proxy, and writes each exchange to ``tests/hosts/litellm-<version>/`` with
the jev server's own exchanges under ``upstream`` (what the proxy sent it, what it answered).

``vllm`` cannot run the server (it needs a GPU): it answers the adapters' requests with the
host of tests/vllmproto.py, built from vLLM's own request models, question types and answer
code in the wheel, and writes each exchange to ``tests/hosts/vllm-<version>/``.

Every fixture says where it came from: ``source`` is ``recorded live``, ``built from the
wheel's source`` or (written by hand, not by this script) ``from the issue report``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/, for jevhost, loopback and support

import jevhost  # noqa: E402
from loopback import LoopbackServer, Recorded, Scripted, vendor_material  # noqa: E402

from checkprofile import Check, Limits, build_bundle, parse_check  # noqa: E402
from support import spec_full_form  # noqa: E402

#: The tiny model, as each jev fixture names it.
JEV_MODEL = (
    f"{jevhost.MODEL_NAME}: a 2-layer Llama (hidden size 64), random weights from a fixed seed,"
    " made by tests/hosts/tiny_model.py; served through the Transformers backend"
)


def _many_names() -> list[dict[str, Any]]:
    names = {f"name{i:03d}": f"description {i}" for i in range(256)}
    return [{"ask": "Which one?", "one_of": names, "pass": ["name000"]}]


#: Each recorded case: (file name, registry model asked, the check, what it shows).
JEV_CASES: list[tuple[str, str, list[dict[str, Any]], str]] = [
    (
        "every-kind",
        jevhost.MODEL,
        spec_full_form(),
        "A check of all three kinds: the score answer's legend is a list of the level texts.",
    ),
    (
        "unsupported-choice",
        jevhost.LIMITED,
        [spec_full_form()[0], spec_full_form()[1]],
        "A model limited to noul answers the choice question 'unsupported'.",
    ),
    (
        "too-many-names",
        jevhost.MODEL,
        _many_names(),
        "A choice of 256 names is refused with a 422 whose detail echoes the request.",
    ),
]


def _relay(target: str) -> Any:
    """A loopback responder that sends each request on to ``target`` and answers what it
    answered (the recording server keeps the request; ``answered`` keeps the response)."""
    answered: list[tuple[int, dict[str, str], bytes]] = []

    def respond(request: Recorded) -> Scripted:
        forward = urllib.request.Request(
            target + request.path,
            data=request.body,
            method=request.method,
            # The key goes on too (a proxy checks it); no header is kept in a fixture.
            headers={
                "Content-Type": "application/json",
                **{
                    name: value
                    for name, value in request.headers.items()
                    if name == "authorization"
                },
            },
        )
        try:
            with urllib.request.urlopen(forward, timeout=60) as response:
                status, headers, body = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            status, headers, body = error.code, dict(error.headers), error.read()
        answered.append((status, headers, body))
        kept = {"Content-Type": headers.get("content-type", "application/json")}
        return Scripted(status=status, body=body, headers=kept)

    respond.answered = answered  # type: ignore[attr-defined]
    return respond


def _exchange(request: Recorded, status: int, headers: Mapping[str, str], body: bytes) -> Any:
    return {
        "request": {
            "method": request.method,
            "path": request.path,
            "body": json.loads(request.body),
        },
        "response": {
            "status": status,
            "content_type": headers.get("content-type", headers.get("Content-Type", "")),
            "body": json.loads(body),
        },
    }


def _ask(url: str, model: str, check: Check) -> None:
    from checkprofile.adapters.systemone import SystemOneEvaluator

    evaluator = SystemOneEvaluator(model, base_url=url, api_key="unused", timeout=60)
    bundle = build_bundle(check, vendor_material(), state_bytes=Limits().check_state_bytes)
    asyncio.run(evaluator.answer(bundle))  # one request: what the library sends, as it is


def record_jev(python: str) -> list[Path]:
    folder = HERE / f"jev-compatible-server-{jevhost.VERSION}"
    folder.mkdir(exist_ok=True)
    written = []
    with jevhost.JevHost(python) as host, LoopbackServer() as relay:
        for name, model, check, about in JEV_CASES:
            respond = _relay(host.url)
            relay.default = respond
            before = relay.count()
            _ask(relay.url, model, parse_check(check))
            assert relay.count() == before + 1, "one request per case"
            status, headers, body = respond.answered[-1]
            fixture = {
                "host": "jev-compatible-server",
                "version": jevhost.VERSION,
                "model": JEV_MODEL,
                "source": "recorded live by tests/hosts/record.py",
                "about": about,
                "registry_model": model,
                "check": check,
                **_exchange(relay.last(), status, headers, body),
            }
            path = folder / f"{name}.json"
            path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
            written.append(path)
    return written


#: Each LiteLLM case: (file name, route, proxy model, the check, adapter options, about).
LITELLM_CASES: list[tuple[str, str, str, list[dict[str, Any]], dict[str, Any], str]] = [
    (
        "systemone-answered",
        "systemone",
        jevhost.MODEL,
        spec_full_form()[:2],
        {},
        "System One through the proxy's /v1/systemone: the host's answers, translated back.",
    ),
    (
        "decisions-input-text-answered",
        "decisions",
        jevhost.MODEL,
        spec_full_form()[:2],
        {"material_part": "input_text"},
        "OpenAI Decisions through /v1/decisions with the material as an input_text part: the"
        " proxy sends the text on as the System One state, and the host's answers come back"
        " in OpenAI's shape.",
    ),
    (
        "decisions-input-json-refused",
        "decisions",
        jevhost.MODEL,
        spec_full_form()[:1],
        {},
        "The input_json part is refused with 400 before routing; the message quotes the"
        " request (the submission among it).",
    ),
    (
        "score-legend-list",
        "systemone",
        jevhost.MODEL,
        spec_full_form(),
        {},
        "The host writes a score answer's legend as a list; the proxy's response model wants"
        " a map, and answers 500 for the whole check.",
    ),
    (
        "unsupported-answer",
        "decisions",
        jevhost.LIMITED,
        spec_full_form()[:2],
        {"material_part": "input_text"},
        "The host answers the choice 'unsupported'; the proxy answers 500 for the whole check.",
    ),
    (
        "upstream-down",
        "systemone",
        "tiny-down",
        spec_full_form()[:1],
        {},
        "The host behind the proxy does not answer: 500 litellm.APIConnectionError, after the"
        " proxy's own two retries.",
    ),
    (
        "unknown-key",
        "decisions",
        jevhost.MODEL,
        spec_full_form()[:1],
        {"material_part": "input_text", "api_key": "sk-not-the-master-key"},
        "A key other than the master key, on a proxy without a database of keys: 400 'No"
        " connected db.', of its key check's type no_db_connection.",
    ),
]


def record_litellm(jev_python: str, litellm_python: str) -> list[Path]:
    import litellmhost

    from checkprofile.adapters.openai_decisions import DecisionsEvaluator
    from checkprofile.adapters.systemone import SystemOneEvaluator

    folder = HERE / f"litellm-{litellmhost.VERSION}"
    folder.mkdir(exist_ok=True)
    written = []
    with (
        jevhost.JevHost(jev_python) as jev,
        litellmhost.Relay(jev.url) as upstream,
        litellmhost.LiteLLMHost(litellm_python, upstream.url) as proxy,
        LoopbackServer() as relay,
    ):
        for name, route, model, check, options, about in LITELLM_CASES:
            respond = _relay(proxy.url)
            relay.default = respond
            before, since = relay.count(), len(upstream.exchanges)
            key = options.pop("api_key", litellmhost.KEY)
            evaluator: Any
            if route == "systemone":
                evaluator = SystemOneEvaluator(model, base_url=relay.url, api_key=key, timeout=60)
            else:
                evaluator = DecisionsEvaluator(
                    model, base_url=f"{relay.url}/v1", api_key=key, timeout=60, **options
                )
            bundle = build_bundle(
                parse_check(check), vendor_material(), state_bytes=Limits().check_state_bytes
            )
            asyncio.run(evaluator.answer(bundle))
            assert relay.count() == before + 1, "one request per case"
            status, headers, body = respond.answered[-1]
            fixture = {
                "host": "LiteLLM proxy",
                "version": litellmhost.VERSION,
                "model": f"{JEV_MODEL}; by jev-compatible-server {jevhost.VERSION} behind the"
                " proxy, routed with its typesafe/ provider",
                "source": "recorded live by tests/hosts/record.py",
                "about": about,
                "route": route,
                "proxy_model": model,
                "options": options,
                "check": check,
                **_exchange(relay.last(), status, headers, body),
                "upstream": [
                    {"request": sent, "status": answered_status, "response": answered}
                    for sent, answered_status, answered in upstream.exchanges[since:]
                ],
            }
            path = folder / f"{name}.json"
            path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
            written.append(path)
    return written


#: Each vLLM case: (file name, route, adapter options, about).
VLLM_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "systemone-every-kind",
        "systemone",
        {},
        "/v1/systemone: a check of all three kinds; the legend is a map, and the noul answer and"
        " the response carry fields the API does not document (probabilities, confidence,"
        " diagnostics).",
    ),
    (
        "decisions-input-text-every-kind",
        "decisions",
        {"material_part": "input_text"},
        "/v1/decisions with the material as an input_text part: a check of all three kinds.",
    ),
    (
        "decisions-input-json-refused",
        "decisions",
        {},
        "/v1/decisions refuses the input_json part: vLLM takes text input only.",
    ),
]


def record_vllm(wheel: str) -> list[Path]:
    import vllmproto

    from checkprofile.adapters.openai_decisions import DecisionsEvaluator
    from checkprofile.adapters.systemone import SystemOneEvaluator

    protocol = vllmproto.protocol(wheel)
    folder = HERE / f"vllm-{vllmproto.VERSION}"
    folder.mkdir(exist_ok=True)
    written = []
    check = spec_full_form()
    for name, route, options, about in VLLM_CASES:
        with LoopbackServer() as server:
            evaluator: Any
            if route == "systemone":
                server.default = vllmproto.vllm_systemone(protocol)
                evaluator = SystemOneEvaluator("qwen3", base_url=server.url, api_key="unused")
            else:
                server.default = vllmproto.vllm_decisions(protocol)
                evaluator = DecisionsEvaluator(
                    "qwen3", base_url=f"{server.url}/v1", api_key="unused", **options
                )
            bundle = build_bundle(
                parse_check(check), vendor_material(), state_bytes=Limits().check_state_bytes
            )
            asyncio.run(evaluator.answer(bundle))
            request = server.last()
            answered = server.default(request)
        fixture = {
            "host": "vLLM",
            "version": vllmproto.VERSION,
            "model": f"none: the label probabilities are tests/vllmproto.py's, not a model's;"
            f" vLLM names its served model, here {vllmproto.SERVED}",
            "source": (
                f"built from the vllm {vllmproto.VERSION} wheel's source by tests/hosts/record.py:"
                " the request is the library's own; the response is what vLLM's request model,"
                " question types, answer code and response model make of it (tests/vllmproto.py),"
                " not a recording of a server"
            ),
            "about": about,
            "route": route,
            "options": options,
            "check": check,
            "request": {"method": request.method, "path": request.path, "body": request.json},
            "response": {
                "status": answered.status,
                "content_type": "application/json",
                "body": json.loads(answered.payload()),
            },
        }
        path = folder / f"{name}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def record_sglang(wheel: str) -> list[Path]:
    import pydantic
    import sglangproto

    from checkprofile.adapters.openai_decisions import DecisionsEvaluator

    protocol = sglangproto.protocol(wheel)
    folder = HERE / f"sglang-{sglangproto.VERSION}"
    folder.mkdir(exist_ok=True)
    check = spec_full_form()
    with LoopbackServer(default=Scripted(status=599)) as server:
        evaluator = DecisionsEvaluator("default", base_url=f"{server.url}/v1", api_key="unused")
        bundle = build_bundle(
            parse_check(check), vendor_material(), state_bytes=Limits().check_state_bytes
        )
        asyncio.run(evaluator.answer(bundle))
        request = server.last()
    try:
        protocol.DecisionRequest.model_validate(request.json)
    except pydantic.ValidationError as error:
        errors = error.errors(include_url=False)
    else:
        raise SystemExit("sglang's model took the OpenAI Decisions request: nothing to record")
    # sglang's RequestValidationError handler (http_server.py) answers 400 with ErrorResponse;
    # its message is the errors' text. The errors' inputs are left out of the message here,
    # as they are the request itself (the submission among it).
    listed = [{"type": e["type"], "loc": ["body", *e["loc"]], "msg": e["msg"]} for e in errors]
    fixture = {
        "host": "sglang",
        "version": sglangproto.VERSION,
        "model": "none: sglang's request model validates the request before any model is asked",
        "source": (
            "built from the sglang 0.5.23 wheel's source by tests/hosts/record.py: the request"
            " is the library's own OpenAI Decisions request; the errors are what sglang's"
            " pydantic DecisionRequest raised for it; the body is the shape its validation"
            " handler answers (ErrorResponse, status 400), not a recording of a server"
        ),
        "about": f"The OpenAI Decisions request is refused with {len(errors)} validation errors.",
        "check": check,
        "request": {"method": request.method, "path": request.path, "body": request.json},
        "response": {
            "status": 400,
            "content_type": "application/json",
            "body": {
                "object": "error",
                "message": f"{len(errors)} validation errors: {json.dumps(listed)}",
                "type": "Bad Request",
                "param": None,
                "code": 400,
            },
        },
    }
    path = folder / "openai-decisions-request-refused.json"
    path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    return [path]


def record_transformers_serve(python: str) -> list[Path]:
    import shutil
    import subprocess
    import tempfile
    import time

    from checkprofile.adapters.openai_chat import ChatEvaluator

    root = Path(tempfile.mkdtemp(prefix="checkprofile-tserve-"))
    checkpoint = root / "tiny-model"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(root / "hf")}
    env.pop("PYTHONPATH", None)
    subprocess.run(
        [python, str(HERE / "tiny_model.py"), str(checkpoint), "--chat-template"],
        env=env,
        check=True,
        capture_output=True,
    )
    version = subprocess.run(
        [python, "-c", "import transformers; print(transformers.__version__)"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = jevhost.free_port()
    command = [str(Path(python).parent / "transformers"), "serve", str(checkpoint)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    folder = HERE / f"transformers-serve-{version}"
    folder.mkdir(exist_ok=True)
    try:
        deadline = time.monotonic() + jevhost.START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("transformers serve did not start") from None
                time.sleep(0.5)
        check = [spec_full_form()[0]]
        with LoopbackServer() as relay:
            respond = _relay(f"http://127.0.0.1:{port}")
            relay.default = respond
            evaluator = ChatEvaluator(str(checkpoint), base_url=f"{relay.url}/v1", api_key="unused")
            bundle = build_bundle(
                parse_check(check), vendor_material(), state_bytes=Limits().check_state_bytes
            )
            asyncio.run(evaluator.answer(bundle))
            status, headers, body = respond.answered[-1]
            fixture = {
                "host": "transformers serve",
                "version": version,
                "model": (
                    "the tiny model of tests/hosts/tiny_model.py with a chat template, pinned"
                    " by its folder's path, which the response names as its model"
                ),
                "source": "recorded live by tests/hosts/record.py",
                "about": "Asked for logprobs, the server answers without them (it logs that it"
                " ignores 'logprobs' and 'top_logprobs').",
                "check": check,
                **_exchange(relay.last(), status, headers, body),
            }
        path = folder / "no-logprobs.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        return [path]
    finally:
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    which = argv[0] if argv else ""
    if which in ("jev", "transformers-serve"):
        python = os.environ.get(jevhost.ENV)
        if not python:
            print(f"set {jevhost.ENV} to the Python of the host's environment", file=sys.stderr)
            return 2
        written = record_jev(python) if which == "jev" else record_transformers_serve(python)
    elif which == "litellm":
        import litellmhost

        pythons = os.environ.get(jevhost.ENV), os.environ.get(litellmhost.ENV)
        if not all(pythons):
            print(f"set {jevhost.ENV} and {litellmhost.ENV}", file=sys.stderr)
            return 2
        written = record_litellm(*pythons)  # type: ignore[arg-type]
    elif which == "vllm":
        import vllmproto

        wheel = os.environ.get(vllmproto.ENV)
        if not wheel:
            print(f"set {vllmproto.ENV} to vLLM's wheel", file=sys.stderr)
            return 2
        written = record_vllm(wheel)
    elif which == "sglang":
        import sglangproto

        wheel = os.environ.get(sglangproto.ENV)
        if not wheel:
            print(f"set {sglangproto.ENV} to sglang's wheel", file=sys.stderr)
            return 2
        written = record_sglang(wheel)
    else:
        print("usage: record.py jev|sglang|transformers-serve|litellm|vllm", file=sys.stderr)
        return 2
    for path in written:
        print(path.relative_to(HERE.parent.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
