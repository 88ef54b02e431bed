/** A stale resourceVersion (HTTP 409 Conflict, reason Conflict): re-read and retry. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** The name is taken (HTTP 409, reason AlreadyExists). */
export class AlreadyExistsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AlreadyExistsError';
  }
}

/** The object does not exist (HTTP 404). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** The schema refused the object (HTTP 422, reason Invalid); `problems` lists each field's problem. */
export class InvalidError extends Error {
  constructor(
    message: string,
    readonly problems: string[],
  ) {
    super(message);
    this.name = 'InvalidError';
  }
}
