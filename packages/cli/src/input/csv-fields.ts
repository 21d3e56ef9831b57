/**
 * Splits one CSV record (RFC 4180: fields separated by `,`; a field in double quotes may hold
 * commas, newlines and `""` for a quote). A quote inside a field that does not begin with one is
 * a character, as most readers take it.
 *
 * @param line - one record, without its final newline (see {@link CsvRecordEnds})
 * @returns the fields, or `undefined` when a quote is not closed or is followed by other text
 */
export function splitCsvLine(line: string): string[] | undefined {
  if (!line.includes('"')) return line.split(',');
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const quote = line.indexOf('"', j);
        if (quote < 0) return undefined;
        value += line.slice(j, quote);
        if (line[quote + 1] === '"') {
          value += '"';
          j = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return fields;
      if (line[i] !== ',') return undefined;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      if (comma < 0) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}

/**
 * Whether `record` ends inside a quoted field: a quote opened and never closed (a log cut off
 * while a record was written), rather than one closed and followed by other text.
 */
export function quoteLeftOpen(record: string): boolean {
  const scan = new CsvRecordEnds();
  scan.chunk(record);
  return scan.end(0) < 0 && scan.quoted;
}

/** What came before the scanner's position, outside quotes. */
const enum Before {
  /** The start of a record or a `,`: a quote here opens a quoted field. */
  FieldStart,
  /** The quote that closed a quoted field: a quote here is the second of `""`. */
  ClosingQuote,
  /** Anything else: a quote here is a character of an unquoted field. */
  Other,
}

const COMMA = 44;

/**
 * Finds where CSV records end in a stream of chunks: at a newline outside quotes (RFC 4180), so
 * a quoted field holding newlines (Python's `csv.writer` writes them as they are) is one field of
 * one record, never records of its own. It only looks for quotes and newlines (`indexOf`), each
 * chunk once, and keeps no text: a record too long to hold is still skipped to its true end.
 *
 * A quote left open runs to the next quote, as in every RFC 4180 reader: such a record is long,
 * and bounded as any line is (`MAX_LINE_BYTES`).
 */
export class CsvRecordEnds {
  /** Newlines inside the quoted fields of the record being read, so far. */
  #newlines = 0;
  #quoted = false;
  #before = Before.FieldStart;
  #chunk = '';
  /** The next quote in the chunk at or after the last position asked; the chunk's length: none. */
  #quote = -1;
  /** The same for newlines. */
  #newline = -1;

  /** The chunk {@link CsvRecordEnds.end} scans next (the state carries over from the last one). */
  chunk(chunk: string): void {
    this.#chunk = chunk;
    this.#quote = -1;
    this.#newline = -1;
  }

  /** The newlines inside the record that ended (or is left at the end of the log); counts from 0 again. */
  take(): number {
    const newlines = this.#newlines;
    this.#newlines = 0;
    return newlines;
  }

  /**
   * @param from - where in the chunk to go on (the start of a record, or of the chunk)
   * @returns the index of the newline that ends the record, or -1 when it goes on past the chunk
   */
  end(from: number): number {
    const length = this.#chunk.length;
    let i = from;
    for (;;) {
      const quote = this.#nextQuote(i);
      if (this.#quoted) {
        for (let newline = this.#nextNewline(i); newline < quote; newline = this.#nextNewline(newline + 1))
          this.#newlines++;
        if (quote === length) return -1;
        this.#quoted = false;
        this.#before = Before.ClosingQuote;
        i = quote + 1;
        continue;
      }
      const newline = this.#nextNewline(i);
      if (newline < quote) {
        this.#before = Before.FieldStart;
        return newline;
      }
      if (quote === length) {
        if (length > i)
          this.#before = this.#chunk.charCodeAt(length - 1) === COMMA ? Before.FieldStart : Before.Other;
        return -1;
      }
      const before =
        quote > i
          ? this.#chunk.charCodeAt(quote - 1) === COMMA
            ? Before.FieldStart
            : Before.Other
          : this.#before;
      if (before === Before.Other) this.#before = Before.Other;
      else this.#quoted = true;
      i = quote + 1;
    }
  }

  /** Whether the scan is inside a quoted field: at the end of the log, a quote left open. */
  get quoted(): boolean {
    return this.#quoted;
  }

  #nextQuote(from: number): number {
    if (this.#quote < from) {
      const quote = this.#chunk.indexOf('"', from);
      this.#quote = quote < 0 ? this.#chunk.length : quote;
    }
    return this.#quote;
  }

  #nextNewline(from: number): number {
    if (this.#newline < from) {
      const newline = this.#chunk.indexOf('\n', from);
      this.#newline = newline < 0 ? this.#chunk.length : newline;
    }
    return this.#newline;
  }
}
