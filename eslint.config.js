import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.local/', 'bench/results/', 'generated/', 'test/clients/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Type-checked rules: an unawaited promise (in Koa middleware, a handler, a hook) is a real class of bug.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // An object literal with an accessor of its own is a dictionary-mode object: one made per request
    // kept the request's working set alive into the old generation (docs/adr/0154-no-accessor-of-its-own-on-a-request-object.md).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ObjectExpression > Property[kind='get'], ObjectExpression > Property[kind='set']",
          message: 'No accessor in an object literal: declare it on a class (docs/adr/0154-no-accessor-of-its-own-on-a-request-object.md).',
        },
      ],
    },
  },
);
