"""Response headers (issue 9, section 6): nosniff on every response, a cacheable draw stream,
ETags and 304s on the constant documents, CORS preflights cached for a day."""

import pytest
import yaml

from specdec_service import create_app
from specdec_service.api import contract
from specdec_service.api.problems import IMMUTABLE

APP = create_app({"TESTING": True, "MAX_CONTENT_LENGTH": 1024})
JSON = "application/json"


@pytest.fixture
def client():
    return APP.test_client()


@pytest.mark.parametrize("method,path,kwargs,status", [
    ("get", "/health", {}, 200),
    ("get", "/v1/models", {}, 200),
    ("get", "/openapi.yaml", {}, 200),
    ("get", "/v1/draws?seed=1", {}, 200),
    ("post", "/v1/step", {"json": {"config": {"draft": "biased", "seed": 1}}}, 200),
    ("post", "/v1/step", {"data": "{", "content_type": JSON}, 400),
    ("get", "/nowhere", {}, 404),
    ("get", "/v1/step", {}, 405),
    ("post", "/v1/step", {"json": {"config": {"draft": "biased", "seed": 1}, "committed": ["A"] * 8}}, 409),
    ("post", "/v1/step", {"data": "[" + " " * 2000 + "]", "content_type": JSON}, 413),
    ("post", "/v1/step", {"data": "{}", "content_type": "text/plain"}, 415),
    ("post", "/v1/step", {"json": {"config": {"draft": "biased", "seed": -1}}}, 422),
    ("get", "/v1/draws?seed=x", {}, 422),
    ("options", "/v1/step", {"headers": {"Origin": "https://a.example", "Access-Control-Request-Method": "POST"}}, 204),
])
def test_every_response_says_nosniff(client, method, path, kwargs, status):
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_an_unexpected_error_says_nosniff_too():
    app = create_app({"TESTING": False})

    @app.get("/boom")
    def boom():
        raise RuntimeError("boom")

    response = app.test_client().get("/boom")
    assert response.status_code == 500 and response.headers["X-Content-Type-Options"] == "nosniff"


def test_draws_are_cacheable_for_ever_with_an_etag(client):
    first = client.get("/v1/draws?seed=1&count=4")
    assert first.status_code == 200
    assert first.headers["Cache-Control"] == IMMUTABLE == "public, max-age=31536000, immutable"
    etag = first.headers["ETag"]
    assert etag.startswith('"') and len(etag) == 42  # a quoted SHA-1 of the body
    again = client.get("/v1/draws?seed=1&count=4", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    assert again.headers["Cache-Control"] == IMMUTABLE
    other = client.get("/v1/draws?seed=2&count=4", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["ETag"] != etag
    refused = client.get("/v1/draws?seed=-1")
    assert refused.status_code == 422 and "Cache-Control" not in refused.headers and "ETag" not in refused.headers


@pytest.mark.parametrize("path", ["/v1/models", "/openapi.yaml"])
def test_constant_documents_have_an_etag_and_answer_304(client, path):
    first = client.get(path)
    etag = first.headers["ETag"]
    assert client.get(path).headers["ETag"] == etag  # the content's hash: the same each time
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    assert client.get(path, headers={"If-None-Match": f'"x", {etag}'}).status_code == 304
    assert client.get(path, headers={"If-None-Match": '"something-else"'}).status_code == 200
    assert "Cache-Control" not in first.headers  # may change with a new version of the service


def test_openapi_etag_is_the_sha1_of_the_document(client):
    import hashlib

    assert client.get("/openapi.yaml").headers["ETag"] == '"%s"' % hashlib.sha1(contract().encode()).hexdigest()


@pytest.mark.parametrize("path", ["/v1/step", "/v1/grade", "/openapi.yaml"])
def test_cors_preflight_is_cached_for_a_day(client, path):
    response = client.options(path, headers={"Origin": "https://a.example", "Access-Control-Request-Method": "GET",
                                             "Access-Control-Request-Headers": "content-type"})
    assert response.headers["Access-Control-Max-Age"] == "86400"
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/v1/step", "/v1/grade", "/v1/models", "/openapi.yaml", "/health", "/"])
@pytest.mark.parametrize("preflight", [True, False], ids=["preflight", "plain"])
def test_options_answers_204_without_a_content_type(client, path, preflight):
    """Every OPTIONS answer (a CORS preflight or not) is 204 No Content with no body and no
    Content-Type, not Flask's default 200 with ``text/html; charset=utf-8`` and an empty body
    (issue 18 section 5); Allow and the CORS headers stay."""
    headers = {"Origin": "https://a.example", "Access-Control-Request-Method": "GET",
               "Access-Control-Request-Headers": "content-type"} if preflight else {}
    response = client.options(path, headers=headers)
    assert response.status_code == 204 and response.data == b""
    assert "Content-Type" not in response.headers, response.headers
    assert "OPTIONS" in response.headers["Allow"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    if path not in ("/health", "/"):  # the CORS resources: /v1/*, /openapi.yaml
        assert response.headers["Access-Control-Allow-Origin"] == "*"
    else:
        assert "Access-Control-Allow-Origin" not in response.headers
    assert response.headers.get("Access-Control-Max-Age") == ("86400" if preflight and "*" in
                                                              response.headers.get("Access-Control-Allow-Origin", "") else None)


@pytest.mark.parametrize("method,path", [("get", "/v1//models"), ("get", "/v1/models//"), ("post", "/v1//step"),
                                         ("get", "/v1/grade//suites"), ("get", "/static//inspector/api.js")])
def test_a_doubled_slash_is_the_404_problem_not_a_redirect_page(client, method, path):
    """werkzeug would redirect (308) with an HTML "Redirecting..." page; the paths are exact."""
    response = getattr(client, method)(path)
    assert response.status_code == 404 and response.headers["Content-Type"] == "application/problem+json"
    assert "Location" not in response.headers and response.get_json()["status"] == 404


def test_the_contract_documents_the_headers():
    document = yaml.safe_load(contract())
    headers = document["components"]["headers"]
    assert headers["NoSniff"]["schema"] == {"type": "string", "const": "nosniff"}
    assert headers["Immutable"]["schema"]["const"] == IMMUTABLE
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if "$ref" in response:  # a shared response, EdgeError (nginx's own answers) included
                    response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
                assert response["headers"]["X-Content-Type-Options"] == {"$ref": "#/components/headers/NoSniff"}, (path, status)
                assert response["headers"]["X-Request-Id"] == {"$ref": "#/components/headers/RequestId"}, (path, status)
    assert headers["RequestId"]["schema"]["pattern"] == "^[A-Za-z0-9._-]{1,128}$"  # observe.REQUEST_ID_FORM
    draws = document["paths"]["/v1/draws"]["get"]["responses"]
    assert set(draws["200"]["headers"]) == {"X-Content-Type-Options", "X-Request-Id", "ETag", "Cache-Control"}
    assert set(draws["304"]["headers"]) == set(draws["200"]["headers"])
    for path in ("/v1/models", "/openapi.yaml"):
        operation = document["paths"][path]["get"]
        assert "ETag" in operation["responses"]["200"]["headers"] and "304" in operation["responses"]
        assert {"in": "header", "name": "If-None-Match"}.items() <= operation["parameters"][0].items()
