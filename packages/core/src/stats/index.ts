export { normalCdf, proportionChangePValues, zWorse } from "./proportions.ts";
