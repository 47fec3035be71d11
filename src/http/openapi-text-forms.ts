/**
 * Corrections of joi-to-json's forms where the document would refuse text the service takes:
 * a date alone, a CIDR block, an allowed or "absent" text. Each becomes an alternative of its own.
 */
export type JoiDescription = Record<string, unknown> & {
  flags?: Record<string, unknown>;
  metas?: Record<string, unknown>[];
};

/** The flags describing a field's use (kept on its alternatives), and those of its own shape. */
function splitFlags(
  out: JoiDescription,
  own: readonly string[],
): { use: Record<string, unknown>; shape: Record<string, unknown> } {
  const { description, default: dflt, presence } = (out.flags ?? {}) as Record<string, unknown>;
  return {
    use: {
      ...(description !== undefined ? { description } : {}),
      ...(dflt !== undefined ? { default: dflt } : {}),
      ...(presence !== undefined ? { presence } : {}),
    },
    shape: Object.fromEntries(
      Object.entries(out.flags ?? {}).filter(([k]) => !['description', 'default', 'presence', ...own].includes(k)),
    ),
  };
}

/**
 * joi's ISO dates take a date alone (`2025-06-01`) as well as a date-time; the converted
 * `format: date-time` would refuse it, so the document lists both forms.
 */
export function withDateOnly(out: JoiDescription): JoiDescription {
  if (out.flags?.format !== 'iso') return out;
  const { use, shape: flags } = splitFlags(out, ['empty']);
  // Texts that mean "absent" (`.empty('')`) are a form of their own too.
  const empty = ((out.flags?.empty as JoiDescription | undefined)?.allow ?? []) as unknown[];
  const texts = empty.filter((v): v is string => typeof v === 'string');
  // A lower bound (the audit's dates: the epoch) keeps the date alone from 1970 on.
  const bounded = ((out.rules ?? []) as { name?: string }[]).some((r) => r.name === 'min' || r.name === 'greater');
  const year = bounded ? '(19[7-9]\\d|[2-9]\\d{3})' : '\\d{4}';
  return {
    type: 'alternatives',
    flags: use,
    matches: [
      { schema: { ...out, flags } },
      {
        schema: {
          type: 'string',
          rules: [{ name: 'pattern', args: { regex: `/^${year}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$/` } }],
        },
      },
      ...(texts.length > 0 ? [{ schema: { type: 'string', flags: { only: true }, allow: texts } }] : []),
    ],
  };
}

/**
 * An IP rule that admits CIDR blocks: JSON Schema's ipv4/ipv6 formats refuse `10.0.0.0/8`, so
 * the document would refuse a block the service takes; such a field is text of its length.
 */
export function withoutCidrFormats(out: JoiDescription): JoiDescription {
  const rules = (out.rules ?? []) as { name?: string; args?: { options?: { cidr?: string; version?: string[] } } }[];
  const ip = rules.find(
    (r) => r.name === 'ip' && r.args?.options?.cidr !== undefined && r.args.options.cidr !== 'forbidden',
  );
  if (!ip) return out;
  const { use, shape: flags } = splitFlags(out, []);
  const others = rules.filter((r) => r !== ip);
  // An address (the formats), or an IPv4 block: octets without leading zeros, a prefix of 0–32.
  const octet = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
  return {
    type: 'alternatives',
    flags: use,
    matches: [
      {
        schema: {
          ...out,
          flags,
          rules: [...others, { ...ip, args: { ...ip.args, options: { ...ip.args?.options, cidr: 'forbidden' } } }],
        },
      },
      {
        schema: {
          ...out,
          flags,
          rules: [...others, { name: 'pattern', args: { regex: `/^(${octet}\\.){3}${octet}\\/(3[0-2]|[12]?\\d)$/` } }],
        },
      },
    ],
  };
}

/**
 * A string whose rules refuse a text joi still takes (`.allow('')`, `.empty('')`: an empty
 * version pin clears it, an agent's '' means absent): joi-to-json drops those values, so the
 * document would refuse what the service accepts. They become an alternative of their own.
 */
export function withAllowedText(out: JoiDescription): JoiDescription {
  const empty = out.flags?.empty as JoiDescription | undefined;
  const texts = [...((out.allow ?? []) as unknown[]), ...((empty?.allow ?? []) as unknown[])].filter(
    (v): v is string => typeof v === 'string',
  );
  // Rules that never refuse a text by its length or form (max: the allowed texts are short).
  const refusing = ((out.rules ?? []) as { name?: string }[]).filter(
    (r) => !['max', 'trim', 'case', 'normalize', 'replace', 'truncate'].includes(r.name ?? ''),
  );
  if (texts.length === 0 || refusing.length === 0 || out.flags?.only) return out;
  const { use, shape: flags } = splitFlags(out, ['empty']);
  const strict: JoiDescription = { ...out, flags };
  delete strict.allow;
  return {
    type: 'alternatives',
    flags: use,
    matches: [{ schema: strict }, { schema: { type: 'string', flags: { only: true }, allow: [...new Set(texts)] } }],
  };
}
