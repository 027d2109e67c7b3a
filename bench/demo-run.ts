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
  /** Times the warm-up went on with a shorter plan because the machine slowed down. */
  warmup_replans: number | null;
  wall_s: number;
  npm_test_alongside: boolean;
  /** The exit code of `npm test` beside the run; null when none ran beside it or it is not known. */
  npm_test_exit_code: number | null;
}
