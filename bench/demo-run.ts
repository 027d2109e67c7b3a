/** One `npm start` on a fresh clone, as bench/demo-runs.ts records it in `runs[]` of bench/results/demo.json. */
export interface DemoRun {
  commit: string;
  base_failure_rate: number | null;
  final_failure_rate: number | null;
  target_met: boolean;
  patterns_worse: number;
  new_model_served: boolean;
  warmup_steps: number | null;
  warmup_planned_steps: number | null;
  warmup_seconds_per_step: number | null;
  wall_s: number;
  npm_test_alongside: boolean;
}
