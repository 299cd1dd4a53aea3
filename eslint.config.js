import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '**/dist/', 'data/', '.scratch/'] },
  js.configs.recommended,
  // Type-aware: rules that need the types, such as a promise nobody awaits (no-floating-promises).
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked with the tsconfig.json that includes it (the root one, or
        // packages/client's); the config files at the root, which none includes, with defaults.
        projectService: { allowDefaultProject: ['*.ts', '*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // A promise is awaited, returned, or marked `void` with a comment saying why nobody waits for it.
      '@typescript-eslint/no-floating-promises': 'error',
      // Fastify plugins, hooks and handlers are async by contract (a plugin without `done` returns a
      // promise), as are the Promise-returning methods of our interfaces: an async function with
      // nothing to await is how those are written, not a mistake.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON answers and database rows as `any` on purpose: checking their shape is what the
    // test's assertions are for, and declaring a type for each one first would only restate them.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  // Plain JavaScript (the CLI launchers, browser assets, the text worker) has no types to check.
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.mjs', 'bin/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
