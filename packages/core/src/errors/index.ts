export { ArcError, InvalidInputError, NotFoundError } from "./arc-error.ts";
