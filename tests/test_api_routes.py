"""GET /health, /v1/models, /v1/draws, the app factory and CORS."""

import pytest

from specdec_service import __version__, create_app
from specdec_service.app import MAX_BODY_BYTES

SEED1 = {"config": {"draft": "biased", "seed": 1}}


def test_health(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "version": __version__}


def test_models_are_the_spec_tables(client):
    models = {m["name"]: m for m in client.get("/v1/models").get_json()["models"]}
    assert {name: m["role"] for name, m in models.items()} == {"toy": "target", "aligned": "draft", "biased": "draft"}
    toy = models["toy"]
    assert toy["vocab"] == ["A", "B", "C"] and toy["start"] == [0.5, 0.3, 0.2]
    assert toy["next"] == {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}
    assert models["aligned"]["start"] == toy["start"] and models["aligned"]["next"] == toy["next"]
    assert models["biased"]["start"] == [0.8, 0.15, 0.05]
    assert all(row == [0.8, 0.15, 0.05] for row in models["biased"]["next"].values())


@pytest.mark.parametrize("seed, expected", [
    (0, [0.8833108082136426, 0.43152799704850997, 0.026433771592597743, 0.9708819781538285]),
    (1, [0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721]),
])
def test_draws_are_the_spec_test_vectors(client, seed, expected):
    draws = client.get(f"/v1/draws?seed={seed}&position=0&count=4").get_json()["draws"]
    assert [d["u"] for d in draws] == expected
    assert [d["position"] for d in draws] == [0, 1, 2, 3]
    for d in draws:  # u is the top 53 bits of the raw value
        assert len(d["hex"]) == 16 and (int(d["hex"], 16) >> 11) * 2.0**-53 == d["u"]


def test_draws_from_a_position_and_the_defaults(client):
    assert client.get("/v1/draws?seed=1&position=3&count=1").get_json()["draws"] == [
        {"position": 3, "u": 0.4443592170557721, "hex": "71c18690ee42c90b"}]
    assert client.get("/v1/draws?seed=1").get_json()["draws"][0]["position"] == 0
    assert len(client.get("/v1/draws?seed=1&count=4096").get_json()["draws"]) == 4096
    assert client.get("/v1/draws?seed=0001&position=03&count=01").get_json()["draws"] == [
        client.get("/v1/draws?seed=1&position=3").get_json()["draws"][0]]  # leading zeros are plain digits
    last = client.get(f"/v1/draws?seed=1&position={2**53 - 1}").get_json()["draws"]
    assert last[0]["position"] == 2**53 - 1


def test_factory_honours_its_config():
    assert create_app().config["MAX_CONTENT_LENGTH"] == MAX_BODY_BYTES == 262144
    small = create_app({"TESTING": True, "MAX_CONTENT_LENGTH": 10}).test_client()
    assert small.post("/v1/step", json=SEED1).status_code == 413
    assert create_app({"TESTING": True}).testing


ORIGIN = {"Origin": "https://frontend.example"}


@pytest.mark.parametrize("method, path, body", [
    ("get", "/v1/models", None), ("get", "/v1/draws?seed=1", None), ("post", "/v1/step", SEED1),
    ("get", "/openapi.yaml", None), ("post", "/v1/step", {"config": {}}),
    ("get", "/v1/no-such-route", None), ("put", "/v1/step", SEED1),
])
def test_cors_is_open_for_the_api_and_the_contract(client, method, path, body):
    """Errors too (422, 404, 405), so that a page on another origin can read the problem."""
    response = getattr(client, method)(path, headers=ORIGIN, json=body)
    assert response.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/v1", "/v1x/step", "/openapi.yaml.bak", "/x/openapi.yaml", "/openapi.yaml%0A"])
def test_cors_covers_only_the_api_and_the_contract(client, path):
    response = client.get(path, headers=ORIGIN)
    assert response.status_code == 404
    assert "Access-Control-Allow-Origin" not in response.headers


def test_cors_preflight_allows_a_json_post(client):
    response = client.options("/v1/step", headers={**ORIGIN, "Access-Control-Request-Method": "POST",
                                                   "Access-Control-Request-Headers": "Content-Type"})
    assert response.status_code == 204 and "Content-Type" not in response.headers  # no body (issue 18)
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert set(response.headers["Access-Control-Allow-Methods"].split(", ")) == {"GET", "POST"}
    assert "content-type" in response.headers["Access-Control-Allow-Headers"].lower()


def test_health_is_not_a_cross_origin_resource(client):
    assert "Access-Control-Allow-Origin" not in client.get("/health", headers=ORIGIN).headers
