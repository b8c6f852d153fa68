// A program written against the TypeScript client generated from openapi.yaml, as a user would
// write it (tests/test_clients.py): openapi-typescript writes the types (./specdec.d.ts, generated
// with --default-non-nullable false, so a field with a default may be left out of a request),
// openapi-fetch calls the service. It steps a session to its end, runs the same session whole,
// grades that trace (alone and in a batch), grades a sampler by its output distribution and
// analyses the config exactly, then prints every answer as one JSON object.
//
// Compiled with tsc --strict and run with node: `node session.js BASE_URL`.
import createClient from "openapi-fetch";
import type { components, operations, paths } from "./specdec.js";

type Schemas = components["schemas"];
type StepBody = operations["stepSession"]["requestBody"]["content"]["application/json"];

const baseUrl = process.argv[2];
const client = createClient<paths>({ baseUrl });

// The README's minimal body: every other setting has its default (target toy, width 3, limit 8).
const config: Schemas["ConfigIn"] = { draft: "biased", seed: 1 };

/** The answer's data; an error (a problem document) or a missing answer ends the program. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (answer.data === undefined) {
    throw new Error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

async function main(): Promise<void> {
  const health: Schemas["HealthOut"] = ok(await client.GET("/health"), "getHealth");

  const steps: Schemas["StepOut"][] = [];
  let state: StepBody = { config };
  for (;;) {
    const step = ok(await client.POST("/v1/step", { body: state }), "stepSession");
    steps.push(step);
    if (step.done !== null) break;
    state = step.state; // the returned state, sent back unchanged
  }

  const trace: Schemas["Trace"] = ok(await client.POST("/v1/runs", { body: { config } }), "createRun");
  const grade = ok(await client.POST("/v1/grade", { body: trace }), "gradeTrace");
  const batch = ok(await client.POST("/v1/grade", { body: { traces: [trace, trace] } }), "gradeTrace");
  const counts: Schemas["DistributionCountsIn"] = {
    config: { draft: "biased", seed: 0 }, m: 1, counters: { accepted: 1500, draft_steps: 2700 },
    counts: [{ prefix: ["A"], count: 497 }, { prefix: ["B"], count: 305 }, { prefix: ["C"], count: 198 }],
  };
  const distribution: Schemas["DistributionOut"] = ok(
    await client.POST("/v1/grade/distribution", { body: counts }), "gradeDistribution");
  const analysis: Schemas["AnalysisOut"] = ok(
    await client.POST("/v1/analysis", { body: { config: { draft: "biased" } } }), "analyze");

  process.stdout.write(JSON.stringify({ health, steps, run: trace, grade, batch, distribution, analysis }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
