import type { Recommendation } from "../analytics/recommendations.ts";
import type { DashboardApi } from "./dashboard-api.ts";

/** What a recommendation's button does: the API call it makes and the page that shows the result. */
export interface RecommendationAction {
  /** The button's words. */
  label: string;
  /** Makes the call for the record `id` names; returns the dashboard path to go to after it. */
  take(api: DashboardApi, id: string): Promise<string>;
}

/**
 * The action of each recommendation kind that one press can take; a kind without one (a low calibration wants a
 * person to revise the rubric) gets a link to the page where that is done instead.
 */
export const recommendationActions: Partial<Record<Recommendation["kind"], RecommendationAction>> = {
  growing_pattern_without_dataset: {
    label: "Build a dataset",
    async take(api, patternId) {
      const dataset = await api.post<{ id: string }>("/datasets", {
        kind: "prompts",
        fromPatterns: [patternId],
      });
      return `/ui/datasets/${encodeURIComponent(dataset.id)}`;
    },
  },
  candidate_awaiting_approval: {
    label: "Approve",
    async take(api, modelId) {
      await api.post(`/model-versions/${encodeURIComponent(modelId)}/approve`, {});
      return `/ui/models/${encodeURIComponent(modelId)}`;
    },
  },
  judge_uncalibrated: {
    label: "Calibrate the judge",
    async take(api) {
      await api.post("/judges/calibrate", {});
      return "/ui/judges";
    },
  },
};

/** Where a recommendation without an action is acted on, by kind. */
export const recommendationPages: Partial<Record<Recommendation["kind"], { label: string; path: string }>> = {
  judge_low_calibration: { label: "Open the judge's rubric", path: "/ui/judges" },
};
