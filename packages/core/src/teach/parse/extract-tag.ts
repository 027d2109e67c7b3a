import type { TeachingTag } from "./teaching-warning.ts";

/** Where and how a tag was found in a text. */
export interface TagMatch {
  /** `closed`: <tag>…</tag>; `unclosed`: <tag>… to the end of the text; `missing`: no opening tag. */
  state: "closed" | "unclosed" | "missing";
  /** Trimmed content; empty when missing. */
  content: string;
  /** Offset of the opening tag (text.length when missing). */
  start: number;
  /** Offset just past the closing tag, or text.length when unclosed or missing. */
  end: number;
}

/**
 * Finds the first or last `<tag>…</tag>` block (case-insensitive, whitespace inside the brackets
 * allowed; `<tag/>` is an empty block). `last` suits answers (a model that revises itself ends with its final answer).
 */
export function extractTag(text: string, tag: TeachingTag, which: "first" | "last" = "first"): TagMatch {
  const open = new RegExp(`<\\s*${tag}\\s*(/)?\\s*>`, "gi");
  const close = new RegExp(`<\\s*/\\s*${tag}\\s*>`, "gi");
  const blocks: TagMatch[] = [];
  let from = 0;
  while (from <= text.length) {
    open.lastIndex = from;
    const opened = open.exec(text);
    if (!opened) break;
    if (opened[1]) {
      // <tag/>: a deliberately empty block.
      blocks.push({
        state: "closed",
        content: "",
        start: opened.index,
        end: opened.index + opened[0].length,
      });
      from = opened.index + opened[0].length;
      continue;
    }
    close.lastIndex = opened.index + opened[0].length;
    const closed = close.exec(text);
    if (!closed) {
      blocks.push({
        state: "unclosed",
        content: text.slice(opened.index + opened[0].length).trim(),
        start: opened.index,
        end: text.length,
      });
      break;
    }
    blocks.push({
      state: "closed",
      content: text.slice(opened.index + opened[0].length, closed.index).trim(),
      start: opened.index,
      end: closed.index + closed[0].length,
    });
    from = closed.index + closed[0].length;
  }
  if (blocks.length === 0) return { state: "missing", content: "", start: text.length, end: text.length };
  return which === "first" ? blocks[0] : blocks[blocks.length - 1];
}

/** Removes every opening or closing tag of the protocol, keeping the text between them. */
export function stripTags(text: string): string {
  return text.replace(/<\s*\/?\s*(thinking|teaching|solution)\s*\/?\s*>/gi, "").trim();
}
