export { logGamma, proportionChangePValues } from "./proportions.ts";
