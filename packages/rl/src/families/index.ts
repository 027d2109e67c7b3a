export {
  FAMILIES_ENV,
  familyPathsFromEnv,
  loadedFamilyModules,
  loadFamiliesFromEnv,
  loadTaskFamilies,
} from "./load-task-families.ts";
