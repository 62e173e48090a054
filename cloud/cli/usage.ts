import { SCOPES } from '../../protocol/enums.ts'
import { SETTINGS } from '../config.ts'

/** How a command is called, what each option means, and which settings it reads. */
export interface CommandHelp {
  usage: string
  summary: string
  options: [flag: string, meaning: string][]
  /** Environment variables it reads; `all` for every setting in cloud/config.ts. */
  env: 'all' | string[]
}

const DATA = ['DATA_DIR', 'DATABASE_BUSY_TIMEOUT_MS']
const ACCOUNT: [string, string] = ['--account ACCOUNT_ID', 'the account (cloud account list)']

export const COMMANDS: Record<string, CommandHelp> = {
  serve: {
    usage: 'cloud serve',
    summary: 'run the cloud: the HTTP API on HOST:PORT, the MQTT broker on MQTT_PORT, data in DATA_DIR',
    options: [],
    env: 'all',
  },
  'account create': {
    usage: 'cloud account create --name NAME',
    summary: 'create an account → {account_id, name, created_at}',
    options: [['--name NAME', "the account's name"]],
    env: DATA,
  },
  'account list': {
    usage: 'cloud account list',
    summary: 'every account → {accounts: [{account_id, name, created_at}]}',
    options: [],
    env: DATA,
  },
  'account show': {
    usage: 'cloud account show --id ACCOUNT_ID',
    summary: 'one account and how many API clients, hubs and printers it has',
    options: [['--id ACCOUNT_ID', 'the account']],
    env: DATA,
  },
  'client create': {
    usage: `cloud client create --account ACCOUNT_ID --scopes ${SCOPES.join(',')} [--name NAME]`,
    summary: 'create an API client → {client_id, client_secret (shown once), account_id, name, scopes}',
    options: [
      ACCOUNT,
      ['--scopes A,B', `what its tokens may do: ${SCOPES.join(', ')}`],
      ['--name NAME', 'what the account calls it, 1 to 100 characters (optional)'],
    ],
    env: DATA,
  },
  'client list': {
    usage: 'cloud client list --account ACCOUNT_ID',
    summary: "the account's API clients, never their secrets → {clients: [...]}",
    options: [ACCOUNT],
    env: DATA,
  },
  'client revoke': {
    usage: 'cloud client revoke --id CLIENT_ID',
    summary:
      'its tokens stop working at once and its secret gets no more → {client_id, account_id, revoked_at}',
    options: [['--id CLIENT_ID', 'the client']],
    env: DATA,
  },
  'hub list': {
    usage: 'cloud hub list --account ACCOUNT_ID',
    summary: "the account's hubs, newest first → {hubs: [...]}",
    options: [ACCOUNT],
    env: DATA,
  },
  'hub show': {
    usage: 'cloud hub show --id AGENT_ID',
    summary: 'one hub: online, last seen, version, and its account',
    options: [['--id AGENT_ID', 'the hub']],
    env: DATA,
  },
  'hub revoke': {
    usage: 'cloud hub revoke --id AGENT_ID',
    summary: 'its credential stops working; a running cloud drops its session within a second',
    options: [['--id AGENT_ID', 'the hub']],
    env: DATA,
  },
  'hub lan enable': {
    usage: 'cloud hub lan enable AGENT_ID',
    summary:
      'let the hub serve the print API on its LAN (docs/lan-printing.md); a running cloud tells it within a second → the hub with its lan_api and account_id',
    options: [['AGENT_ID', 'the hub']],
    env: DATA,
  },
  'hub lan disable': {
    usage: 'cloud hub lan disable AGENT_ID',
    summary:
      'stop the hub serving the print API on its LAN (the default); a running cloud tells it within a second → the hub with its lan_api and account_id',
    options: [['AGENT_ID', 'the hub']],
    env: DATA,
  },
  'release pin': {
    usage: 'cloud release pin --account ACCOUNT_ID|--hub AGENT_ID --version X.Y.Z',
    summary:
      'hold an account’s hubs, or one hub (first), at a release of the catalog (docs/hub-updates.md) → {account_id|agent_id, release_pin}',
    options: [ACCOUNT, ['--hub AGENT_ID', 'one hub'], ['--version X.Y.Z', 'a release the catalog lists']],
    env: DATA,
  },
  'release unpin': {
    usage: 'cloud release unpin --account ACCOUNT_ID|--hub AGENT_ID',
    summary: 'follow the catalog’s current release again → {account_id|agent_id, release_pin: null}',
    options: [ACCOUNT, ['--hub AGENT_ID', 'one hub']],
    env: DATA,
  },
  'release status': {
    usage: 'cloud release status --hub AGENT_ID',
    summary:
      'the release a hub runs, the one it is to run and why, and its latest self-update → {version, release, release_source, account_pin, hub_pin, update}',
    options: [['--hub AGENT_ID', 'the hub']],
    env: DATA,
  },
  'mosquitto-config': {
    usage: 'cloud mosquitto-config --dir DIR [--plugin PATH] [--hub-host ADDRESS] [--hub-front-dir FRONT]',
    summary:
      'write what an external Mosquitto 2.0 needs (mosquitto.conf, dynamic-security.json, cloud-password) and the hubs’ front before it (hub-front.cfg for HAProxy) → {dir, config_file, files, start, hub_front, env}; then run mosquitto -c DIR/mosquitto.conf and haproxy -f FRONT/hub-front.cfg',
    options: [
      ['--dir DIR', 'where to write them (kept: the password and the hubs already there)'],
      ['--plugin PATH', 'mosquitto_dynamic_security.so, if not where Debian puts it'],
      [
        '--hub-host ADDRESS',
        'where the hubs’ front listens (default 0.0.0.0), at MQTT_PUBLIC_URL’s port or MQTT_PORT',
      ],
      ['--hub-front-dir FRONT', 'where to write the front’s files (default DIR), to run it as its own user'],
    ],
    env: [
      'MQTT_URL',
      'MQTT_ADMIN_USERNAME',
      'MQTT_TLS_CERT_FILE',
      'MQTT_TLS_KEY_FILE',
      'MQTT_MAX_PACKET_BYTES',
      'MQTT_PUBLIC_URL',
      'MQTT_PORT',
      'MQTT_CONNECT_TIMEOUT_MS',
      'MQTT_MAX_PENDING_CONNECTIONS',
      'MQTT_MAX_CONNECTIONS',
      'HUB_KEEPALIVE_SECONDS',
    ],
  },
  'printer list': {
    usage: 'cloud printer list --account ACCOUNT_ID',
    summary: "the account's printers, newest first → {printers: [...]}",
    options: [ACCOUNT],
    env: DATA,
  },
  'printer show': {
    usage: 'cloud printer show --id PRINTER_ID',
    summary: 'one printer: capabilities, health, online, its hub and account',
    options: [['--id PRINTER_ID', 'the printer']],
    env: DATA,
  },
  'printer remove': {
    usage: 'cloud printer remove --id PRINTER_ID',
    summary:
      'remove a printer no hub reports any more (refused while online or with unfinished jobs); its jobs stay readable → {printer_id, account_id, removed_at}',
    options: [['--id PRINTER_ID', 'the printer']],
    env: DATA,
  },
  'job list': {
    usage: 'cloud job list --account ACCOUNT_ID [--limit N]',
    summary: "the account's most recent print jobs, newest first → {jobs: [...]}",
    options: [ACCOUNT, ['--limit N', 'how many, 1 to 100 (20)']],
    env: DATA,
  },
  'job show': {
    usage: 'cloud job show --id PRINT_JOB_ID',
    summary:
      'one print job of any account, with its hub and what the hub was told (offered_at, cancel_requested_at)',
    options: [['--id PRINT_JOB_ID', 'the print job']],
    env: DATA,
  },
  'enrollment create': {
    usage: 'cloud enrollment create --account ACCOUNT_ID --name HUB_NAME',
    summary: 'a single-use token for a new hub → {enrollment_id, token (shown once), expires_at, state}',
    options: [ACCOUNT, ['--name HUB_NAME', "the hub's name"]],
    env: [...DATA, 'ENROLLMENT_TTL_HOURS'],
  },
  'app create': {
    usage: 'cloud app create --name NAME --public-key FILE [--partner]',
    summary:
      'register a developer application with its RS256 public key → {app_id, name, partner, kid, created_at}',
    options: [
      ['--name NAME', "the application's name"],
      [
        '--public-key FILE',
        'its RS256 public key: PEM, or a JWK (kid: the JWK’s own, else its RFC 7638 thumbprint)',
      ],
      ['--partner', 'grant the partner capability (provision and manage accounts through /partner-api/v1)'],
    ],
    env: DATA,
  },
  'app key add': {
    usage: 'cloud app key add --app APP_ID --public-key FILE',
    summary: 'add a further public key, for rotation → {app_id, kid, keys}',
    options: [
      ['--app APP_ID', 'the application'],
      ['--public-key FILE', 'the new RS256 public key (PEM or JWK)'],
    ],
    env: DATA,
  },
  'app install': {
    usage: `cloud app install --app APP_ID --account ACCOUNT_ID --permissions ${SCOPES.join(',')}`,
    summary:
      'install a (non-partner) application on an account with approved permissions → {installation_id, app_id, account_id, permissions, active, created_at}',
    options: [
      ['--app APP_ID', 'the application'],
      ACCOUNT,
      ['--permissions A,B', `what its installation tokens may be granted: ${SCOPES.join(', ')}`],
    ],
    env: DATA,
  },
  'enrollment revoke': {
    usage: 'cloud enrollment revoke --id ENROLLMENT_ID',
    summary: 'withdraw a pending enrollment token → {enrollment_id, state}',
    options: [['--id ENROLLMENT_ID', 'the enrollment']],
    env: DATA,
  },
  'user create': {
    usage: 'cloud user create --account ACCOUNT_ID --email EMAIL --role owner|member',
    summary:
      'a console user and their one-time set-password link (SET_PASSWORD_TTL_HOURS) → {user_id, set_password_url}',
    options: [
      ACCOUNT,
      ['--email EMAIL', 'what they sign in with (unique within the account, compared without case)'],
      ['--role owner|member', 'an owner also manages users and API clients'],
    ],
    env: [...DATA, 'PUBLIC_URL', 'SET_PASSWORD_TTL_HOURS'],
  },
}

export const USAGE = `usage: ${Object.values(COMMANDS)
  .map((command) => command.usage)
  .join('\n       ')}
       cloud help [COMMAND], cloud COMMAND --help`

/** Each setting's variable, meaning and default, read from cloud/config.ts (SETTINGS). */
function settingsHelp(names: 'all' | string[]): string[] {
  return Object.values(SETTINGS)
    .filter((setting) => names === 'all' || names.includes(setting.env))
    .map((setting) => {
      const fallback =
        setting.default === undefined || setting.default === '' ? '' : ` (default ${String(setting.default)})`
      return `  ${setting.env.padEnd(36)} ${setting.description}${fallback}`
    })
}

function optionLines(options: [string, string][]): string[] {
  return [...options, ['--help', 'this help'] as [string, string]].map(
    ([flag, meaning]) => `  ${flag.padEnd(36)} ${meaning}`,
  )
}

export function commandHelp(name: string): string {
  const command = COMMANDS[name]!
  return [
    `usage: ${command.usage}`,
    '',
    command.summary,
    '',
    'options:',
    ...optionLines(command.options),
    '',
    'environment:',
    ...settingsHelp(command.env),
    '',
  ].join('\n')
}

export function generalHelp(): string {
  return [
    'usage: cloud COMMAND [OPTIONS]   (npm run -s cloud -- COMMAND ...; npm start runs cloud serve)',
    '',
    'Each command prints one JSON object on stdout; errors are one line on stderr (exit 1, or 2 for usage).',
    'The admin commands work on DATA_DIR whether or not the cloud runs.',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(20)} ${command.summary}`),
    '',
    '`cloud help COMMAND` or `cloud COMMAND --help` lists its options.',
    '',
    'environment (every setting; `cloud serve` reads them all):',
    ...settingsHelp('all'),
    '',
  ].join('\n')
}
