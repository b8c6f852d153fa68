"""The SDK's typed records follow the service's one description of each
object: the trace format's classes have exactly the properties of
``engine/trace.schema.json``'s definitions, the grading reports exactly those
of the contract's components."""

import dataclasses
from pathlib import Path

import pytest
import yaml

import specdec_client.reports as reports
import specdec_client.types as types
from specdec_service.engine import trace_schema

SCHEMA = trace_schema()
CONTRACT = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text(encoding="utf-8"))

TRACE_CLASSES = {  # trace.schema.json definition (None: the root) -> SDK class
    None: types.Trace,
    "block": types.Block,
    "config": types.Config,
    "counters": types.Counters,
    "draw": types.Draw,
    "proposal": types.Proposal,
    "proposal_step": types.DraftStep,
    "verification_step": types.VerificationStep,
    "correction": types.Correction,
    "block_verification_step": types.BlockVerificationStep,
    "block_correction": types.BlockCorrection,
    "target_sample": types.TargetSample,
    "tree_proposal": types.Proposal,  # mode tree (SPEC 11): the same class, with its chains
    "tree_proposal_step": types.DraftStep,  # ... and each step's chain
    "tree_test": types.TreeTest,
    "tree_nodes_proposal": types.Proposal,  # a tree of SPEC 12: the same class, with its nodes
    "tree_node": types.TreeNode,
    "tree_node_step": types.NodeStep,
    "residual_test": types.ResidualTest,
    "target_only_test": types.TargetOnlyTest,
}
REPORT_CLASSES = {  # contract component -> SDK class
    "GradeReportOut": reports.GradeReport,
    "CheckOut": reports.Check,
    "FailureOut": reports.Failure,
    "DivergenceOut": reports.FirstDivergence,
    "DiagnosisOut": reports.Diagnosis,
    "AgreementOut": reports.Agreement,
    "ReferenceOut": reports.Reference,
    "GradeBatchOut": reports.GradeBatch,
    "SummaryOut": reports.GradeSummary,
    "DistributionOut": reports.DistributionReport,
    "CellOut": reports.Cell,
    "ImpossibleOut": reports.ImpossiblePrefix,
    "AcceptanceOut": reports.Acceptance,
    "SuiteOut": reports.Suite,
    "SuiteConfigOut": reports.SuiteConfig,
    "SuiteSummaryOut": reports.SuiteSummary,
}


def field_names(cls) -> set:
    return {f.name for f in dataclasses.fields(cls) if f.name != "raw"}


@pytest.mark.parametrize("definition", list(TRACE_CLASSES), ids=str)
def test_a_trace_class_has_a_field_per_schema_property(definition):
    # a class that reads two definitions (one chain, or mode tree's chains) has the fields of both
    cls = TRACE_CLASSES[definition]
    names = [d for d, c in TRACE_CLASSES.items() if c is cls]
    properties = set().union(*((SCHEMA if d is None else SCHEMA["$defs"][d])["properties"] for d in names))
    assert field_names(cls) == properties


def test_every_object_of_the_trace_schema_has_a_class():
    objects = {name for name, node in SCHEMA["$defs"].items() if "properties" in node}
    # a custom model table stays the JSON mapping it is (Config.target / Config.draft)
    assert objects - {"model_table"} == set(TRACE_CLASSES) - {None}


@pytest.mark.parametrize("component", [c for c, cls in REPORT_CLASSES.items() if cls], ids=str)
def test_a_report_class_has_a_field_per_contract_property(component):
    schema = CONTRACT["components"]["schemas"][component]
    assert field_names(REPORT_CLASSES[component]) == set(schema["properties"])
