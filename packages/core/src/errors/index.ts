export { ArcError, ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from "./arc-error.ts";
