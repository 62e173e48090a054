/**
 * The hub CLI's usage and help texts (docs/running-a-hub.md), in the words of the command a person
 * types: `print-hub` on an installed hub, `hub` (the npm script) in a checkout.
 */

/** The command's name in help and errors. */
export type HubCommand = 'print-hub' | 'hub'

/** `print-hub` when the installed launcher started the hub (packaging/print-hub.sh sets PRINT_HUB_INSTALL_ROOT). */
export function hubCommand(env: NodeJS.ProcessEnv): HubCommand {
  return env.PRINT_HUB_INSTALL_ROOT ? 'print-hub' : 'hub'
}

export function usage(command: HubCommand): string {
  return `usage: ${command} run --cloud URL --data DIR [--enroll TOKEN] [--printer URI]...
       ${command} help, ${command} run --help`
}

const PRINTER_URIS = `printer URIs (CUPS device-URI style; every form takes the options below):
  socket://HOST[:PORT]             raw TCP (JetDirect), port 9100 by default
  serial:/dev/ttyUSB0              a serial line; also baud= (9600), parity=none|even|odd|mark|space,
                                   data_bits=5..8 (8), stop_bits=1|1.5|2 (1), flow=none|rtscts|xonxoff
  usblp:/dev/usb/lp0               the Linux usblp character device
  usb://VID:PID[/SERIAL]           libusb, four hex digits each, e.g. usb://04b8:0202
  ipp://HOST[:631]/PATH, ipps://…  an office printer by IPP (PDFs only); options name= and ca_file= (a PEM
                                   certificate an ipps:// printer's own must chain to) only
  options: language=escpos|zpl|tspl|cpcl (required for socket and serial; usb and usblp guess it from the
           device), name=, dpi=72..2400, width_mm= (widest media), height_mm= (longest label),
           head_dots= (dots the head prints across: 576 on 80 mm paper, 384 on 58 mm, 832 for labels)
  e.g. 'socket://10.0.0.5:9100?language=zpl&dpi=203&width_mm=104&name=Labels'
  USB printers (/dev/usb/lp* and printer-class devices) are found without a flag.`

const ENVIRONMENT = `environment:
  LOG_LEVEL                        pino log level (info)
  LOG_FORMAT                       auto: pretty lines on a terminal, JSON otherwise; json or pretty force one
  HUB_CLOUD_RETRY_MAX_MS           longest wait between tries while the cloud cannot be reached (30000)
  HUB_HEALTH_INTERVAL_MS           how often idle printers are asked for their status (30000)
  HUB_STATUS_TIMEOUT_MS            how long a status query waits for an answer (2000)
  HUB_PAPER_WAIT_TIMEOUT_MS        how long a job waits for paper or a closed cover before failing (600000)
  HUB_UNREACHABLE_TIMEOUT_MS       how long a job waits for an unreachable printer or cloud (300000)
  HUB_RECHECK_MS                   how often a waiting job looks at its printer again (5000)
  HUB_RENDER_DEADLINE_MS           Ghostscript's time to render one PDF before the job fails (60000)
  HUB_RENDER_WORKERS               Ghostscript worker processes shared by the printers, 1 to 8 (2)
  HUB_LAN_PORT                     HTTPS port of the LAN print API, while the cloud enables it (8443)
  HUB_LAN_HOST                     address the LAN print API listens on (every interface)
  HUB_LAN_ADVERTISE                1: advertise it with DNS-SD through Avahi; 0: do not (1)
  HUB_PRESENCE_CONFIRM_MS          how long the hub waits for the cloud to record it online before it
                                   announces itself again, doubling up to 5 minutes (20000)
  HUB_UPDATE_TRIAL_MS              how long a release the hub updated itself to has to connect to the cloud
                                   before it is rolled back (120000; docs/hub-updates.md)`

export function runHelp(command: HubCommand): string {
  return `usage: ${command} run --cloud URL --data DIR [--enroll TOKEN] [--printer URI]...

Runs the hub: enrols with --enroll on the first run (without it, and without an identity, it pairs: it logs a
pairing code to type on an onboarding page), then connects to the cloud and prints its jobs. While the
cloud cannot be reached it waits and tries again; SIGTERM or SIGINT stops it.

options:
  --cloud URL                      the cloud's PUBLIC_URL, e.g. http://10.0.0.2:8080 or https://print.example.com
  --data DIR                       where the hub keeps its identity (identity.json, mode 0600) and its spool
  --enroll TOKEN                   the enrollment token (cloud enrollment create); on the first run only,
                                   instead of pairing by a code
  --printer URI                    a printer, once per printer (see below)
  --help                           this help

${PRINTER_URIS}

${ENVIRONMENT}
`
}

export function help(command: HubCommand): string {
  const run = runHelp(command)
  const npm = command === 'hub' ? '   (npm run -s hub -- COMMAND ...)' : ''
  return `usage: ${command} COMMAND [OPTIONS]${npm}

commands:
  run                              run the hub (${command} run --help for its options)
  help                             this help

${run.slice(run.indexOf('options:'))}`
}
