// What a driver tells the catalog about its `backend` block: the keys it takes and their check, the
// CEL among them, the outputs it can make, and whether it is itself a chat server. Each driver says
// it in its own folder (src/backends/<driver>/catalog.ts) and the catalog is loaded with the table
// of them (src/backends/drivers.ts): the rules here name no driver, so a new one changes nothing in
// domain/.
import type { BackendBinding, CelMap, ModelOutput } from './catalog.ts';
import type { Raw, Report } from './catalog-check.ts';

/** Reads a JSON file named relative to the catalog (a workflow a driver's block names). */
export type ReadJson = (path: string) => unknown;

export interface CatalogDriver<B extends BackendBinding = BackendBinding> {
  /** The keys its block may have besides `driver`; any other is a problem. */
  readonly keys: readonly string[];
  /** The block, checked: one problem per bad key (each starting `backend.`), undefined when any. */
  check(raw: Raw, bad: Report, readJson: ReadJson): B | undefined;
  /** Reports a model output this driver cannot make (a chat server makes only text). */
  checkOutput?(output: ModelOutput, bad: Report): void;
  /**
   * Its CEL expressions by name (`inputs`, …), over the model's fields like `price`: compiled once
   * at load and tried on sample inputs, so an expression that fails for some inputs stops the start.
   */
  cel?(binding: B): Record<string, CelMap | undefined>;
  /** Names among `cel` whose every value must be a string (a chat message's content). */
  readonly celStrings?: readonly string[];
  /** The backend is itself a chat server: a chat request's conversation is sent to it as it is. */
  readonly chatServer?: boolean;
}

/** The drivers a catalog may name, by name, in the order a problem lists them. */
export type CatalogDrivers = Readonly<Record<string, CatalogDriver>>;
